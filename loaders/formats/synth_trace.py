"""One synth-ai trace (`seed_<N>_trace.json`): shape detection, row facts and the transcript.

See ../shared/formats/synth-eval.md §5-§6. Two shapes occur: compact v3 (`event_history`
of `lm_call` events with `llm_request`/`llm_response`) and the full SessionTrace, whose
events and messages appear twice (under each step and in the top-level histories). The
top-level lists are read; steps are flattened only when those lists are empty, so nothing
is ever counted twice. Pure functions: dicts in, schema objects out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from loaders.content import content_to_text, openai_tool_calls, parse_arguments, to_message
from loaders.schema import (
    EnvironmentEvent,
    GenericEvent,
    Grade,
    LoadWarning,
    Message,
    ModelCall,
    ToolCall,
    Transcript,
)
from loaders.timestamps import parse_timestamp

SHAPE_COMPACT = "synth-compact"
SHAPE_FULL = "synth-full"
STEP_REWARD_LABEL = "sum of step rewards"
SEED_FILE = re.compile(r"seed_(-?\d+)_trace\.json$")
RUN_ID_SEED = re.compile(r"^.+-seed-(-?\d+)-[0-9a-f]{8}$")
# synth-ai's own mapping of boundary message types to chat roles (§6.2)
MESSAGE_TYPE_ROLES = {
    "observation": "system", "policy_system_prompt": "system", "policy_user_prompt": "user",
    "action": "assistant", "policy_tool_call": "assistant", "tool_use": "assistant", "tool_result": "tool",
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def unwrap(trace: Any) -> dict[str, Any] | None:
    """The trace itself: `{"session_trace": {...}}` and `{"trace": {...}}` wrappers removed.

    The outer `metadata` (e.g. `trace_correlation_id`) is merged under the inner one,
    which wins on conflicts.
    """
    if not isinstance(trace, dict):
        return None
    for key in ("session_trace", "trace"):
        inner = trace.get(key)
        if isinstance(inner, dict) and (key == "session_trace" or detect_shape(inner) is not None):
            outer_meta = trace.get("metadata") if isinstance(trace.get("metadata"), dict) else {}
            inner_meta = inner.get("metadata") if isinstance(inner.get("metadata"), dict) else {}
            if outer_meta:
                inner = {**inner, "metadata": {**outer_meta, **inner_meta}}
            return unwrap(inner) if key == "trace" else inner
    return trace


def detect_shape(trace: Any) -> str | None:
    """§5 detection, in the spec's order, on an already unwrapped trace; None when neither."""
    if not isinstance(trace, dict):
        return None
    history = trace.get("event_history")
    items = [e for e in history if isinstance(e, dict)] if isinstance(history, list) else []
    if isinstance(trace.get("session_time_steps"), list):
        return SHAPE_FULL
    if "session_id" in trace and items and all("type" not in e and "event_type" not in e for e in items):
        return SHAPE_FULL
    if any(e.get("type") == "lm_call" or e.get("event_type") == "lm_call" for e in items):
        return SHAPE_COMPACT
    if str(trace.get("schema_version") or "").startswith("3"):
        return SHAPE_COMPACT
    return None


def is_trace(obj: Any) -> bool:
    return detect_shape(unwrap(obj)) is not None


def seed_of(trace: Any, filename: str | None = None) -> int | None:
    """§6.6: the file name is authoritative, then `metadata.seed`, then a CLI-style `run_id`."""
    if filename:
        match = SEED_FILE.search(filename.replace("\\", "/").rsplit("/", 1)[-1])
        if match:
            return int(match.group(1))
    inner = unwrap(trace) or {}
    meta = inner.get("metadata") if isinstance(inner.get("metadata"), dict) else {}
    seed = meta.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool):
        return seed
    if isinstance(seed, str) and seed.lstrip("-").isdigit():
        return int(seed)
    run_id = meta.get("run_id")
    if isinstance(run_id, str):
        match = RUN_ID_SEED.match(run_id)
        if match:
            return int(match.group(1))
    return None


# ---- events and messages -------------------------------------------------------------


def events_of(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """Top-level `event_history`; the steps' copies only when that list is empty (never both)."""
    history = trace.get("event_history")
    events = [e for e in history if isinstance(e, dict)] if isinstance(history, list) else []
    if events:
        return events
    return [e for step in _steps(trace) for e in (step.get("events") or []) if isinstance(e, dict)]


def boundary_messages_of(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """Top-level `markov_blanket_message_history`; the steps' copies only when it is empty."""
    history = trace.get("markov_blanket_message_history")
    messages = [m for m in history if isinstance(m, dict)] if isinstance(history, list) else []
    if messages:
        return messages
    return [m for step in _steps(trace) for m in (step.get("markov_blanket_messages") or []) if isinstance(m, dict)]


def _steps(trace: dict[str, Any]) -> list[dict[str, Any]]:
    steps = trace.get("session_time_steps")
    return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []


def event_kind(event: dict[str, Any]) -> str:
    """§6.1: "lm", "environment", "runtime" or "generic" (database `event_type` and compact `type` too)."""
    tag = event.get("type") or event.get("event_type")
    if tag in ("lm_call", "cais"):
        return "lm"
    if "call_records" in event or "model_name" in event or "llm_request" in event or "llm_response" in event:
        return "lm"
    if tag == "environment" or any(k in event for k in ("reward", "terminated", "truncated")):
        return "environment"
    if tag == "runtime" or "actions" in event:
        return "runtime"
    return "generic"


def event_time(event: dict[str, Any]) -> datetime | None:
    record = event.get("time_record") if isinstance(event.get("time_record"), dict) else {}
    for value in (record.get("event_time"), event.get("timestamp"), event.get("event_time"), record.get("message_time")):
        when = parse_timestamp(value)
        if when is not None:
            return when
    return None


# ---- tokens and cost (§6.4) ----------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_total: int | None = None
    source: str | None = None  # "event", "call_records", "llm_response.usage"


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:  # NaN
        return None
    return int(value)


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return float(value)


def _usage_from(total: Any, tin: Any, tout: Any, source: str) -> Usage | None:
    t_in, t_out, t_total = _int(tin), _int(tout), _int(total)
    if t_total is None and t_in is not None and t_out is not None:
        t_total = t_in + t_out
    if t_total is None:
        return None
    return Usage(t_in, t_out, t_total, source)


def _records(event: dict[str, Any]) -> list[dict[str, Any]]:
    records = event.get("call_records")
    return [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []


def record_usage(record: dict[str, Any]) -> Usage | None:
    usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
    return _usage_from(usage.get("total_tokens"), usage.get("input_tokens"), usage.get("output_tokens"), "call_records")


def lm_event_usage(event: dict[str, Any]) -> Usage | None:
    """Tokens of one LM event from the FIRST source present, so no call is counted twice."""
    found = _usage_from(event.get("total_tokens"), event.get("input_tokens"), event.get("output_tokens"), "event")
    if found:
        return found
    per_record = [u for u in (record_usage(r) for r in _records(event)) if u is not None]
    if per_record:
        return Usage(_sum_or_none([u.tokens_in for u in per_record]), _sum_or_none([u.tokens_out for u in per_record]),
                     sum(u.tokens_total or 0 for u in per_record), "call_records")
    response = event.get("llm_response") if isinstance(event.get("llm_response"), dict) else {}
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    return _usage_from(usage.get("total_tokens"), usage.get("prompt_tokens", usage.get("input_tokens")),
                       usage.get("completion_tokens", usage.get("output_tokens")), "llm_response.usage")


def lm_event_cost(event: dict[str, Any]) -> float | None:
    """Dollars: the event's `cost_usd`, else the sum over its call records (never both)."""
    own = _num(event.get("cost_usd"))
    if own is not None:
        return own
    costs = [_num((r.get("usage") or {}).get("cost_usd")) for r in _records(event) if isinstance(r.get("usage"), dict)]
    present = [c for c in costs if c is not None]
    if present:
        return sum(present)
    response = event.get("llm_response") if isinstance(event.get("llm_response"), dict) else {}
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    return _num(usage.get("cost_usd"))


def _sum_or_none(values: list[int | None]) -> int | None:
    """A sum only when every part is known: a partial in/out split would undercount."""
    return None if not values or any(v is None for v in values) else sum(v for v in values if v is not None)


# ---- row facts -----------------------------------------------------------------------


@dataclass
class TraceFacts:
    """What a SampleRow needs from one trace. Step rewards are summed, never called the score."""

    shape: str | None
    seed: int | None = None
    model: str | None = None
    n_lm_calls: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_total: int | None = None  # None = unknown (no LM event carried usage)
    token_sources: tuple[str, ...] = ()
    cost_usd: float | None = None
    latency_ms: float | None = None  # sum of the LM calls' latency, not the rollout's wall-clock time
    n_messages: int | None = None
    step_rewards: tuple[float, ...] = ()
    step_reward_sum: float | None = None  # label: STEP_REWARD_LABEL
    final_reward: float | None = None  # reward of the last environment event
    terminated: bool | None = None
    truncated: bool | None = None
    correct: bool | None = None  # from the last `system_state_after.correct`
    correlation_id: str | None = None
    warnings: list[LoadWarning] = field(default_factory=list)

    @property
    def step_reward_mean(self) -> float | None:
        return sum(self.step_rewards) / len(self.step_rewards) if self.step_rewards else None


def trace_facts(trace: Any, filename: str | None = None) -> TraceFacts:
    """Row figures of one trace (wrapped or not); tokens and cost per §6.4, one source per LM call."""
    inner = unwrap(trace)
    shape = detect_shape(inner)
    facts = TraceFacts(shape=shape, seed=seed_of(trace, filename))
    if inner is None or shape is None:
        facts.warnings.append(LoadWarning(code="unknown_trace_shape", file=filename,
                                          message="not a synth trace (neither compact v3 nor a full SessionTrace)"))
        return facts
    meta = inner.get("metadata") if isinstance(inner.get("metadata"), dict) else {}
    facts.correlation_id = _str(meta.get("trace_correlation_id")) or _str(meta.get("correlation_id"))
    models: list[str] = []
    ins: list[int | None] = []
    outs: list[int | None] = []
    totals: list[int] = []
    sources: list[str] = []
    costs: list[float] = []
    latencies: list[float] = []
    rewards: list[float] = []
    for event in events_of(inner):
        kind = event_kind(event)
        if kind == "lm":
            facts.n_lm_calls += 1
            usage = lm_event_usage(event)
            if usage is not None:
                ins.append(usage.tokens_in)
                outs.append(usage.tokens_out)
                totals.append(usage.tokens_total or 0)
                sources.append(usage.source or "?")
            cost = lm_event_cost(event)
            if cost is not None:
                costs.append(cost)
            latency = _lm_latency(event)
            if latency is not None:
                latencies.append(latency)
            model = _lm_model(event)
            if model:
                models.append(model)
            facts.correlation_id = facts.correlation_id or _str(event.get("correlation_id"))
        elif kind == "environment":
            reward = _num(event.get("reward"))
            if reward is not None:
                rewards.append(reward)
                facts.final_reward = reward
            if isinstance(event.get("terminated"), bool):
                facts.terminated = event["terminated"]
            if isinstance(event.get("truncated"), bool):
                facts.truncated = event["truncated"]
            after = event.get("system_state_after")
            if isinstance(after, dict) and isinstance(after.get("correct"), bool):
                facts.correct = after["correct"]
    facts.model = models[-1] if models else _str(meta.get("model"))
    if totals:
        facts.tokens_total = sum(totals)
        facts.tokens_in = _sum_or_none(ins)
        facts.tokens_out = _sum_or_none(outs)
        facts.token_sources = tuple(sorted(set(sources)))
        if len(totals) < facts.n_lm_calls:
            missing = facts.n_lm_calls - len(totals)
            facts.warnings.append(LoadWarning(code="partial_usage", file=filename, message=(
                f"{missing} of {facts.n_lm_calls} LM call(s) carry no token usage; the token sum is partial")))
    facts.cost_usd = sum(costs) if costs else None
    facts.latency_ms = sum(latencies) if latencies else None
    facts.step_rewards = tuple(rewards)
    facts.step_reward_sum = sum(rewards) if rewards else None
    facts.n_messages = sum(1 for item in _items(inner, shape, filename, []) if isinstance(item, Message))
    return facts


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _lm_model(event: dict[str, Any]) -> str | None:
    for record in _records(event):
        if _str(record.get("model_name")):
            return record["model_name"]
    request = event.get("llm_request") if isinstance(event.get("llm_request"), dict) else {}
    response = event.get("llm_response") if isinstance(event.get("llm_response"), dict) else {}
    return _str(event.get("model_name")) or _str(request.get("model")) or _str(response.get("model")) or _str(event.get("model"))


def _lm_latency(event: dict[str, Any]) -> float | None:
    own = _num(event.get("latency_ms"))
    if own is not None:
        return own
    values = [v for v in (_num(r.get("latency_ms")) for r in _records(event)) if v is not None]
    if values:
        return sum(values)
    response = event.get("llm_response") if isinstance(event.get("llm_response"), dict) else {}
    return _num(response.get("latency_ms"))


# ---- transcript ----------------------------------------------------------------------


def build_transcript(run_id: str, sample_id: str, attempt: int, trace: Any) -> Transcript:
    """The conversation once, in time order, with a ModelCall where each LM call happened.

    Each LM call's input repeats the history, so only the messages not already shown
    (a common prefix) are added. Environment events become reward markers. The outcome
    score is not in a trace (§6.5): the caller merges it into `grade` from the results.
    """
    inner = unwrap(trace)
    shape = detect_shape(inner)
    warnings: list[LoadWarning] = []
    if inner is None or shape is None:
        warnings.append(LoadWarning(code="unknown_trace_shape", message="not a recognised synth trace; shown as raw JSON"))
        items: list[Any] = [GenericEvent(type="raw_trace", data=trace)]
        return Transcript(run_id=run_id, sample_id=sample_id, attempt=attempt, items=tuple(items), raw=(trace,),
                          warnings=tuple(warnings))
    items = _items(inner, shape, None, warnings)
    correct = None
    final_env = None
    for item in items:
        if isinstance(item, EnvironmentEvent):
            final_env = item
            if isinstance(item.state_after, dict) and isinstance(item.state_after.get("correct"), bool):
                correct = item.state_after["correct"]
    grade = Grade(correct=correct, finish_reason="max_steps" if final_env is not None and final_env.truncated else None)
    return Transcript(run_id=run_id, sample_id=sample_id, attempt=attempt, items=tuple(items), grade=grade, raw=(trace,),
                      warnings=tuple(warnings))


@dataclass
class _Block:
    when: datetime | None
    seq: int
    kind: str  # "lm", "environment", "runtime", "generic", "boundary"
    data: dict[str, Any]


def _items(inner: dict[str, Any], shape: str, filename: str | None, warnings: list[LoadWarning]) -> list[Any]:
    events = events_of(inner)
    blocks = [_Block(event_time(e), i, event_kind(e), e) for i, e in enumerate(events)]
    has_lm_messages = any(b.kind == "lm" and _lm_has_messages(b.data) for b in blocks)
    if not has_lm_messages:  # §6.2 replay: boundary messages only when no LM source holds the conversation
        for j, msg in enumerate(boundary_messages_of(inner)):
            blocks.append(_Block(event_time(msg), len(events) + j, "boundary", msg))
    _order(blocks)
    items: list[Any] = []
    shown: list[Message] = []
    for block in blocks:
        if block.kind == "lm":
            items.extend(_lm_items(block.data, block.when, shown))
        elif block.kind == "environment":
            e = block.data
            items.append(EnvironmentEvent(
                system=_str(e.get("system_instance_id")), reward=_num(e.get("reward")),
                terminated=e.get("terminated") if isinstance(e.get("terminated"), bool) else None,
                truncated=e.get("truncated") if isinstance(e.get("truncated"), bool) else None,
                state_before=e.get("system_state_before"), state_after=e.get("system_state_after"), timestamp=block.when))
        elif block.kind == "boundary":
            msg = boundary_message(block.data)
            items.append(msg)
            shown.append(msg)
        else:
            tag = block.data.get("type") or block.data.get("event_type") or "event"
            label = "runtime" if block.kind == "runtime" else str(tag)
            items.append(GenericEvent(type=label, data=block.data, timestamp=block.when))
    return items


def _order(blocks: list[_Block]) -> None:
    """Stable sort by time; a block without a time keeps its place after its predecessor."""
    last = _EPOCH
    keys: dict[int, tuple[datetime, int]] = {}
    for block in sorted(blocks, key=lambda b: b.seq):
        if block.when is not None:
            last = block.when
        keys[block.seq] = (block.when or last, block.seq)
    blocks.sort(key=lambda b: keys[b.seq])


def _lm_has_messages(event: dict[str, Any]) -> bool:
    if any(r.get("input_messages") or r.get("output_messages") or r.get("output_tool_calls") for r in _records(event)):
        return True
    return isinstance(event.get("llm_request"), dict) or isinstance(event.get("llm_response"), dict)


def _lm_items(event: dict[str, Any], when: datetime | None, shown: list[Message]) -> list[Any]:
    records = [r for r in _records(event) if r.get("input_messages") or r.get("output_messages") or r.get("output_tool_calls")]
    out: list[Any] = []
    if records:
        for record in records:
            inputs = [to_message(m, default_role="user") for m in record.get("input_messages") or []]
            out.extend(_new_messages(inputs, shown))
            usage = (lm_event_usage(event) if len(records) == 1 else record_usage(record)) or Usage()
            cost = lm_event_cost(event) if len(records) == 1 else _num((record.get("usage") or {}).get("cost_usd"))
            latency = (_lm_latency(event) if len(records) == 1 else None) or _num(record.get("latency_ms"))
            out.append(ModelCall(
                model=_str(record.get("model_name")) or _str(event.get("model_name")), tokens_in=usage.tokens_in,
                tokens_out=usage.tokens_out, tokens_total=usage.tokens_total, cost_usd=cost, latency_ms=latency,
                finish_reason=_str(record.get("finish_reason")),
                timestamp=parse_timestamp(record.get("started_at")) or when))
            outputs = [to_message(m, default_role="assistant") for m in record.get("output_messages") or []]
            calls = _record_tool_calls(record.get("output_tool_calls"))
            if calls:
                if outputs and outputs[-1].role == "assistant":
                    outputs[-1] = outputs[-1].model_copy(update={"tool_calls": outputs[-1].tool_calls + calls})
                else:
                    outputs.append(Message(role="assistant", tool_calls=calls))
            outputs = [m.model_copy(update={"timestamp": m.timestamp or parse_timestamp(record.get("completed_at")) or when})
                       for m in outputs]
            out.extend(outputs)
            shown.extend(outputs)
        return out
    request = event.get("llm_request") if isinstance(event.get("llm_request"), dict) else {}
    raw_inputs = request.get("messages") if isinstance(request.get("messages"), list) else []
    out.extend(_new_messages([to_message(m, default_role="user") for m in raw_inputs], shown))
    message, finish = _compact_response(event.get("llm_response"))
    usage = lm_event_usage(event) or Usage()
    out.append(ModelCall(model=_lm_model(event), tokens_in=usage.tokens_in, tokens_out=usage.tokens_out,
                         tokens_total=usage.tokens_total, cost_usd=lm_event_cost(event), latency_ms=_lm_latency(event),
                         finish_reason=finish, timestamp=when))
    if message is not None:
        message = message.model_copy(update={"timestamp": message.timestamp or when})
        out.append(message)
        shown.append(message)
    return out


def _compact_response(response: Any) -> tuple[Message | None, str | None]:
    """The three `llm_response` forms of §5 A, plus a raw OpenAI response with `choices`."""
    if not isinstance(response, dict):
        return (None, None) if response is None else (Message(role="assistant", text=str(response)), None)
    finish = _str(response.get("finish_reason"))
    if isinstance(response.get("message"), dict):
        return to_message(response["message"], default_role="assistant"), finish
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        choice = choices[0]
        msg = choice.get("message") if isinstance(choice.get("message"), dict) else {"content": choice.get("text")}
        return to_message(msg, default_role="assistant"), finish or _str(choice.get("finish_reason"))
    body = {k: v for k, v in response.items() if k not in ("usage", "finish_reason", "latency_ms", "model", "id")}
    return to_message(body, default_role="assistant"), finish


def _record_tool_calls(calls: Any) -> tuple[ToolCall, ...]:
    """`output_tool_calls[]` carry both a parsed `arguments` and the `arguments_json` text: keep both."""
    dicts = [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
    out = []
    for call, source in zip(openai_tool_calls(dicts), dicts, strict=True):
        raw = source.get("arguments_json")
        if call.arguments_raw is None and isinstance(raw, str):
            call = call.model_copy(update={"arguments_raw": raw})
        out.append(call)
    return tuple(out)


def _key(msg: Message) -> tuple[str, str, str | None]:
    return (msg.role, msg.text.strip(), msg.tool_call_id)


def _new_messages(msgs: list[Message], shown: list[Message]) -> list[Message]:
    """The part of an LM input not already shown: the history repeats on every call.

    Shown messages that are not in the input (e.g. boundary notes) are skipped over; if the
    input rewrites the history (truncated context), it is shown again in full.
    """
    if not shown:
        shown.extend(msgs)
        return list(msgs)
    common = 0
    while common < min(len(msgs), len(shown)) and _key(msgs[common]) == _key(shown[common]):
        common += 1
    if common < len(shown) and common < len(msgs):
        shown.clear()
        shown.extend(msgs)
        return list(msgs)
    new = msgs[common:]
    shown.extend(new)
    return new


def boundary_message(obj: dict[str, Any]) -> Message:
    """A `markov_blanket` message: role from `message_type`, `json_payload` (a JSON string) parsed."""
    message_type = str(obj.get("message_type") or obj.get("role") or "unknown")
    role = MESSAGE_TYPE_ROLES.get(message_type, message_type)
    content = obj.get("content")
    payload: Any = None
    text = ""
    parts: tuple[Any, ...] = ()
    if isinstance(content, dict) and ("json_payload" in content or "text" in content) and "parts" not in content:
        text = content.get("text") if isinstance(content.get("text"), str) else ""
        raw_payload = content.get("json_payload")
        if isinstance(raw_payload, str):
            payload, _raw = parse_arguments(raw_payload)
        elif raw_payload is not None:
            payload = raw_payload
    elif isinstance(content, str):
        text = content
        stripped = content.strip()
        if stripped[:1] in ("{", "["):
            parsed, _raw = parse_arguments(stripped)
            payload = parsed if not isinstance(parsed, str) else None
    else:
        text, parts = content_to_text(content)
    tool_calls: tuple[ToolCall, ...] = ()
    if isinstance(payload, dict) and ("tool" in payload or "name" in payload) and "arguments" in payload:
        args = payload["arguments"]
        parsed_args, raw_args = parse_arguments(args)
        tool_calls = (ToolCall(id=_str(payload.get("id")) or _str(payload.get("call_id")),
                               name=str(payload.get("tool") or payload.get("name")), arguments=parsed_args,
                               arguments_raw=raw_args if raw_args is not None else json.dumps(args)),)
    if not text and payload is not None and not tool_calls:
        text = json.dumps(payload, indent=2, ensure_ascii=False) if not isinstance(payload, str) else payload
    metadata = dict(obj.get("metadata") or {}) if isinstance(obj.get("metadata"), dict) else {}
    metadata["message_type"] = message_type
    if payload is not None:
        metadata["json_payload"] = payload
    return Message(role=role, text=text, parts=parts, tool_calls=tool_calls, timestamp=event_time(obj), metadata=metadata)
