"""synth trace parsing: both shapes, the wrapper, steps-only traces, token sources and the de-duplicated transcript."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from loaders.formats.synth_trace import (
    SHAPE_COMPACT,
    SHAPE_FULL,
    STEP_REWARD_LABEL,
    boundary_message,
    build_transcript,
    detect_shape,
    lm_event_usage,
    seed_of,
    trace_facts,
    unwrap,
)
from loaders.schema import EnvironmentEvent, GenericEvent, Message, ModelCall

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "synth"


def load(rel: str) -> dict:
    return json.loads((FIX / rel).read_text())


def test_detects_both_shapes_and_the_wrapper() -> None:
    assert detect_shape(load("traces/compact/seed_0_trace.json")) == SHAPE_COMPACT
    assert detect_shape(load("traces/full/seed_0_trace.json")) == SHAPE_FULL
    wrapped = load("traces/wrapped/seed_0_trace.json")
    assert detect_shape(wrapped) is None  # the wrapper itself is neither shape...
    inner = unwrap(wrapped)
    assert detect_shape(inner) == SHAPE_FULL  # ...until unwrapped
    assert inner["metadata"]["trace_correlation_id"] == "trace_wrap01"  # outer metadata kept
    assert inner["metadata"]["run_id"] == "banking77-seed-0-1a2b3c4d"  # inner metadata too
    assert detect_shape({"schema_version": "3.0", "event_history": []}) == SHAPE_COMPACT
    assert detect_shape({"foo": 1}) is None
    assert detect_shape({"trace": load("traces/compact/seed_0_trace.json")}) is None
    assert detect_shape(unwrap({"trace": load("traces/compact/seed_0_trace.json")})) == SHAPE_COMPACT


def test_seed_from_name_then_metadata_then_run_id() -> None:
    full = load("traces/full/seed_0_trace.json")
    assert seed_of(full, "dir/seed_7_trace.json") == 7  # the file name is authoritative
    assert seed_of(full) == 0  # metadata.seed
    compact = load("traces/compact/seed_0_trace.json")
    assert seed_of(compact) == 0  # metadata.run_id banking77-seed-0-1a2b3c4d
    assert seed_of({"schema_version": "3.0", "metadata": {"run_id": "custom"}}) is None


def test_compact_facts() -> None:
    facts = trace_facts(load("traces/compact/seed_0_trace.json"))
    assert facts.shape == SHAPE_COMPACT
    assert (facts.tokens_in, facts.tokens_out, facts.tokens_total) == (312, 18, 330)
    assert facts.token_sources == ("llm_response.usage",)
    assert facts.cost_usd is None  # compact traces carry no cost: unknown, not 0
    assert facts.n_lm_calls == 1
    assert facts.n_messages == 3  # system, user, assistant tool call
    assert facts.step_reward_sum is None and facts.correct is None
    assert facts.correlation_id == "trace_abc123"


@pytest.mark.parametrize("rel", ["traces/full/seed_0_trace.json", "traces/wrapped/seed_0_trace.json",
                                 "traces/steps_only/seed_0_trace.json"])
def test_full_facts_count_each_lm_call_once(rel: str) -> None:
    facts = trace_facts(load(rel))
    assert facts.shape == SHAPE_FULL
    # event total (330) taken, not also the call record's usage (330) nor the step copy
    assert (facts.tokens_in, facts.tokens_out, facts.tokens_total) == (312, 18, 330)
    assert facts.token_sources == ("event",)
    assert facts.cost_usd == pytest.approx(5.76e-05)
    assert facts.latency_ms == 1500.0
    assert facts.model == "gpt-4o-mini"
    assert facts.n_lm_calls == 1
    assert facts.step_rewards == (1.0,) and facts.step_reward_sum == 1.0 and facts.final_reward == 1.0
    assert facts.correct is True and facts.terminated is True and facts.truncated is False
    assert facts.seed == 0
    assert STEP_REWARD_LABEL == "sum of step rewards"


def test_multiturn_full_trace_counts_top_level_only() -> None:
    facts = trace_facts(load("traces/multiturn/seed_2_trace.json"))
    # two LM events (333 + 385), each also present under its step: never counted twice
    assert facts.n_lm_calls == 2
    assert (facts.tokens_in, facts.tokens_out, facts.tokens_total) == (318 + 371, 15 + 14, 718)
    assert facts.cost_usd == pytest.approx(0.0001512 + 0.0001708)
    assert facts.step_rewards == (0.0, 0.0) and facts.final_reward == 0.0
    assert facts.correct is False and facts.seed == 2
    assert facts.correlation_id == "trace_b2f00d"


def test_token_source_order_per_event() -> None:
    event = {"model_name": "m", "input_tokens": 10, "output_tokens": 5, "total_tokens": None,
             "call_records": [{"usage": {"input_tokens": 100, "output_tokens": 50, "total_tokens": 150}}]}
    assert lm_event_usage(event).tokens_total == 15  # event in+out before the call records
    event = {"model_name": "m", "call_records": [{"usage": {"total_tokens": 150}}, {"usage": {"input_tokens": 7, "output_tokens": 3}}]}
    usage = lm_event_usage(event)
    assert (usage.tokens_total, usage.tokens_in, usage.source) == (160, None, "call_records")
    event = {"type": "lm_call", "llm_response": {"content": "hi", "usage": {"prompt_tokens": 4, "completion_tokens": 2}}}
    assert lm_event_usage(event).tokens_total == 6
    assert lm_event_usage({"type": "lm_call", "llm_response": {"content": "hi"}}) is None


def test_compact_transcript() -> None:
    t = build_transcript("r", "0", 0, load("traces/compact/seed_0_trace.json"))
    kinds = [i.kind for i in t.items]
    assert kinds == ["message", "message", "model_call", "message"]
    system, user, call, answer = t.items
    assert (system.role, user.role) == ("system", "user")
    assert user.text == "Customer Query: I still have not received my new card."
    assert isinstance(call, ModelCall)
    assert (call.tokens_in, call.tokens_out, call.tokens_total, call.finish_reason) == (312, 18, 330, "tool_calls")
    assert call.timestamp == datetime(2026, 11, 22, 13, 10, 20, 796850, tzinfo=UTC)
    assert answer.role == "assistant" and answer.tool_calls[0].name == "banking77_classify"
    assert answer.tool_calls[0].arguments == {"intent": "card_arrival"}
    assert answer.tool_calls[0].arguments_raw == '{"intent": "card_arrival"}'


def test_full_transcript_shown_once_with_env_event() -> None:
    t = build_transcript("r", "0", 0, load("traces/full/seed_0_trace.json"))
    assert [i.kind for i in t.items] == ["message", "message", "model_call", "message", "environment"]
    call = t.items[2]
    assert (call.model, call.tokens_total, call.cost_usd, call.latency_ms) == ("gpt-4o-mini", 330, 5.76e-05, 1500.0)
    assert call.timestamp == datetime(2025, 11, 22, 13, 8, 1, 143456, tzinfo=UTC)
    tool = t.items[3].tool_calls[0]
    assert (tool.id, tool.arguments, tool.arguments_raw) == ("tool_1", {"intent": "card_arrival"}, '{"intent": "card_arrival"}')
    env = t.items[4]
    assert isinstance(env, EnvironmentEvent)
    assert (env.system, env.reward, env.terminated, env.truncated) == ("banking77_env", 1.0, True, False)
    assert env.state_before == {"query": "..."} and env.state_after["correct"] is True
    assert t.grade.correct is True and t.grade.score is None  # the outcome score is not in a trace
    assert t.raw[0]["session_id"] == "sess_5d2c9e0a"


def test_steps_only_trace_with_repr_and_space_timestamps() -> None:
    t = build_transcript("r", "0", 0, load("traces/steps_only/seed_0_trace.json"))
    # no LM source lost and no duplicate: the steps are flattened because the top-level lists are empty
    assert [i.kind for i in t.items] == ["message", "message", "model_call", "message", "environment"]
    assert t.items[4].timestamp == datetime(2025, 11, 22, 13, 8, 2, 653456, tzinfo=UTC)


def test_multiturn_transcript_deduplicates_history() -> None:
    t = build_transcript("r", "2", 0, load("traces/multiturn/seed_2_trace.json"))
    summary = [(i.kind, getattr(i, "role", None)) for i in t.items]
    assert summary == [
        ("message", "system"), ("message", "user"), ("model_call", None), ("message", "assistant"), ("environment", None),
        ("message", "tool"), ("model_call", None), ("message", "assistant"), ("environment", None),
    ]
    messages = t.messages
    assert len(messages) == 5  # the second call's input repeated system+user+assistant: shown once
    assert messages[3].tool_call_id == "tool_1" and messages[3].text.startswith("Error: 'card_late'")
    calls = [i for i in t.items if isinstance(i, ModelCall)]
    assert [(c.tokens_in, c.tokens_out, c.latency_ms) for c in calls] == [(318, 15, 1500.0), (371, 14, 1210.0)]
    assert [m.tool_calls[0].arguments["intent"] for m in messages if m.tool_calls] == ["card_late", "card_arrival"]
    assert t.grade.correct is False


def test_boundary_messages_when_no_lm_source() -> None:
    trace = copy.deepcopy(load("traces/full/seed_0_trace.json"))
    for holder in [trace["event_history"], *(s["events"] for s in trace["session_time_steps"])]:
        holder[:] = [e for e in holder if "call_records" not in e]
    t = build_transcript("r", "0", 0, trace)
    assert [i.kind for i in t.items] == ["message", "message", "environment"]
    user, action = t.items[0], t.items[1]
    assert (user.role, user.metadata["message_type"]) == ("user", "user")
    assert action.role == "assistant"
    assert action.tool_calls[0].name == "banking77_classify" and action.tool_calls[0].arguments == {"intent": "card_arrival"}
    assert action.metadata["json_payload"] == {"tool": "banking77_classify", "arguments": {"intent": "card_arrival"}}


def test_boundary_message_roles() -> None:
    def role(kind: str) -> str:
        return boundary_message({"content": {"text": "x", "json_payload": None}, "message_type": kind}).role

    assert [role(k) for k in ("observation", "policy_system_prompt", "action", "policy_tool_call", "tool_result", "user")] == [
        "system", "system", "assistant", "assistant", "tool", "user"]
    plain = boundary_message({"content": '{"a": 1}', "message_type": "tool_result"})  # database form: a plain string
    assert plain.text == '{"a": 1}' and plain.metadata["json_payload"] == {"a": 1}


def test_unknown_shape_is_raw_with_warning() -> None:
    t = build_transcript("r", "0", 0, {"hello": "world"})
    assert isinstance(t.items[0], GenericEvent) and t.items[0].type == "raw_trace"
    assert t.warnings[0].code == "unknown_trace_shape"
    facts = trace_facts({"hello": "world"})
    assert facts.shape is None and facts.tokens_total is None and facts.warnings[0].code == "unknown_trace_shape"


def test_compact_response_forms_and_generic_events() -> None:
    base = {"schema_version": "3.0", "event_history": [
        {"type": "lm_call", "timestamp": "2025-01-01T00:00:01Z", "llm_request": {"messages": [{"role": "user", "content": "hi"}]},
         "llm_response": {"content": "hello there"}},
        {"type": "lm_call", "timestamp": "2025-01-01T00:00:02Z",
         "llm_request": {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello there"},
                                      {"role": "user", "content": [{"type": "text", "text": "again"}]}]},
         "llm_response": {"choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}},
        {"type": "custom", "timestamp": "2025-01-01T00:00:00Z", "data": 1},
    ]}
    t = build_transcript("r", "0", 0, base)
    assert [(i.kind, getattr(i, "text", None)) for i in t.items] == [
        ("event", None), ("message", "hi"), ("model_call", None), ("message", "hello there"), ("message", "again"),
        ("model_call", None), ("message", "ok")]
    assert t.items[5].finish_reason == "stop"
    assert sum(isinstance(i, Message) for i in t.items) == trace_facts(base).n_messages == 4
