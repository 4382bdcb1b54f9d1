"""Deterministic, real-shaped eval data of any size: the benchmarks' input and the demo's comparison pair.

Shapes follow ../shared/formats/: openai-evals LocalRecorder, nanoeval JsonRecorder (ids on
every record, Step/FinalResult convos, interleaved attempts), synth-ai traces + results.
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

T0 = datetime(2026, 11, 20, 9, 0, 0, tzinfo=UTC)
SYSTEM = "Answer with the number only."
FILLER = "Context paragraph about arithmetic word problems and careful reading of the question. "


def _question(rng: random.Random, i: int, big: bool) -> tuple[str, str]:
    a, b = rng.randint(2, 999), rng.randint(2, 999)
    text = f"Problem {i}: a crate holds {a} apples and another {b}. How many apples are there in total?"
    if big:
        text = FILLER * (50_000 // len(FILLER)) + text
    return text, str(a + b)


def _few_shot(rng: random.Random, k: int) -> list[dict[str, str]]:
    """k worked examples before the question, as few-shot chat prompts carry them (the bulk of a real log's bytes)."""
    msgs: list[dict[str, str]] = []
    for _ in range(k):
        question, answer = _question(rng, rng.randint(0, 10**6), False)
        msgs += [{"role": "system", "name": "example_user", "content": question},
                 {"role": "system", "name": "example_assistant", "content": answer}]
    return msgs


def evals_log(path: Path, n_samples: int, *, skill: float, run_id: str, model: str, seed: int = 7,
              eval_name: str = "arith.dev.v0", big_every: int = 0, few_shot: int = 0) -> dict[str, float]:
    """An oaieval log: spec, final_report on line 2, then sampling+match per sample in completion order.

    `few_shot` worked examples per prompt make lines realistically long; `big_every` makes every Nth prompt 50 KB.
    """
    rng = random.Random(seed)
    outcomes = random.Random(seed * 1000 + int(skill * 100))
    order = list(range(n_samples))
    rng.shuffle(order)
    correct = 0
    usage_in = usage_out = 0
    events: list[str] = []
    eid = 0
    for i in order:
        question, answer = _question(rng, i, bool(big_every) and i % big_every == big_every - 1)
        shots = _few_shot(outcomes, few_shot) if few_shot else []
        ok = outcomes.random() < skill
        correct += ok
        sampled = answer if ok else str(int(answer) + outcomes.choice([-10, -1, 1, 100]))
        p_tok = 30 + len(question) // 4
        usage_in += p_tok
        usage_out += 2
        sid = f"{eval_name.split('.')[0]}.dev.{i}"
        when = (T0 + timedelta(seconds=eid)).strftime("%Y-%m-%d %H:%M:%S.%f+00:00")
        events.append(json.dumps({"run_id": run_id, "event_id": eid, "sample_id": sid, "type": "sampling",
                                  "data": {"prompt": [{"role": "system", "content": SYSTEM}, *shots, {"role": "user", "content": question}],
                                           "sampled": [sampled], "model": model + "-2026-01-01",
                                           "usage": {"prompt_tokens": p_tok, "completion_tokens": 2, "total_tokens": p_tok + 2}},
                                  "created_by": "", "created_at": when}))
        eid += 1
        events.append(json.dumps({"run_id": run_id, "event_id": eid, "sample_id": sid, "type": "match",
                                  "data": {"correct": ok, "expected": answer, "picked": sampled if ok else None,
                                           "sampled": sampled, "options": [answer]}, "created_by": "", "created_at": when}))
        eid += 1
    accuracy = correct / n_samples if n_samples else float("nan")
    spec = {"spec": {"completion_fns": [model], "eval_name": eval_name, "base_eval": eval_name.split(".")[0], "split": "dev",
                     "run_config": {"completion_fns": [model], "eval_spec": {"cls": "evals.elsuite.basic.match:Match",
                                    "args": {"samples_jsonl": "arith/samples.jsonl"}, "key": eval_name, "group": "arith"},
                                    "seed": 20220722, "max_samples": None, "command": f"oaieval {model} arith",
                                    "initial_settings": {"visible": True}},
                     "created_by": "", "run_id": run_id, "created_at": T0.strftime("%Y-%m-%d %H:%M:%S.%f")}}
    report = {"final_report": {"accuracy": accuracy, "boostrap_std": 0.0, "usage_prompt_tokens": usage_in,
                               "usage_completion_tokens": usage_out, "usage_total_tokens": usage_in + usage_out}, "run_id": run_id}
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(spec) + "\n" + json.dumps(report) + "\n")
        fh.write("\n".join(events) + ("\n" if events else ""))
    return {"accuracy": accuracy}


def _convo(question: str, answer: str, n_turns: int, tool_chars: int = 0) -> dict:
    msgs = [{"id": "m0", "author": {"role": "user", "name": None}, "content": {"content_type": "text", "parts": [question]},
             "recipient": "all", "end_turn": None, "status": "finished_successfully", "metadata": {}}]
    for t in range(n_turns):
        msgs.append({"id": f"m{2 * t + 1}", "author": {"role": "assistant", "name": None},
                     "content": {"content_type": "text", "parts": [f"python -c 'print({t})'"]}, "recipient": "container.exec",
                     "end_turn": False, "status": "finished_successfully", "metadata": {}})
        msgs.append({"id": f"m{2 * t + 2}", "author": {"role": "tool", "name": "container.exec"},
                     "content": {"content_type": "text", "parts": [str(t) + _tool_output(t, tool_chars)]}, "recipient": "all",
                     "end_turn": None,
                     "status": "finished_successfully", "metadata": {}})
    msgs.append({"id": "mz", "author": {"role": "assistant", "name": None}, "content": {"content_type": "text", "parts": [answer]},
                 "recipient": "all", "end_turn": True, "status": "finished_successfully", "metadata": {}})
    return {"messages": msgs, "metadata": {}}


def _tool_output(t: int, chars: int) -> str:
    """Padding that looks like a tool's stdout (test runner lines), so convos weigh what agent convos weigh."""
    if chars <= 0:
        return ""
    line = f"\ntests/test_case_{t}.py::test_step PASSED [{t % 100:3d}%]"
    return (line * (chars // len(line) + 1))[:chars]


def nanoeval_log(path: Path, n_tasks: int, n_attempts: int, *, skill: float, run_id: str, seed: int = 11,
                 steps: int = 1, interleave: int = 4, tool_chars: int = 0) -> dict[str, float]:
    """A nanoeval log whose records all carry sample_id/group_id (as_default_recorder), attempts interleaved, keys in
    the order nanoeval's JsonRecorder writes them (a payload's `type` comes last: decoders must not depend on it).

    `tool_chars` pads each tool output, so a Step/FinalResult convo weighs what a real agent's does.
    """
    rng = random.Random(seed)
    t = T0
    pending: list[list[str]] = []
    lines = [json.dumps({"timestamp": t.isoformat(), "record_type": "run_started", "sample_id": None, "group_id": None,
                         "run_spec": {"run_id": run_id, "run_set_id": run_id[:12] + "SET00000"}})]
    correct = total = 0
    for task in range(n_tasks):
        difficulty = rng.random()
        question, answer = _question(rng, task, False)
        for attempt in range(n_attempts):
            sid, gid = f"task_{task}", str(attempt)
            ok = rng.random() < skill * (1.2 - difficulty * 0.4)
            score = 1.0 if ok else 0.0
            correct += ok
            total += 1
            recs = []
            for s in range(steps):
                recs.append({"record_type": "extra", "data": {"schema_version": 1, "convo": _convo(question, "…", s, tool_chars),
                             "grade": {"score": 0.0, "grader_log": "tests fail", "is_continuous": False},
                             "elapsed": f"P0DT0H0M{3 * (s + 1)}.000000S", "type": "step"}})
            recs.append({"record_type": "extra", "data": {"schema_version": 1,
                         "grade": {"score": score, "grader_log": f"score={score}", "is_continuous": False},
                         "convo": _convo(question, answer if ok else "I am not sure", steps, tool_chars),
                         "finish_status": "finished-successfully",
                         "max_steps_reached": not ok and rng.random() < 0.3, "max_tokens_reached": False, "max_time_reached": False,
                         "type": "final_result_successful"}})
            recs.append({"record_type": "match", "correct": ok, "expected": None, "picked": None, "prob_correct": None})
            recs.append({"record_type": "sample_completed", "status": "completed"})
            # nanoeval's own key order (see ../shared/examples): record_type second, and a payload's `type` last
            pending.append([json.dumps({"timestamp": "", "record_type": r.pop("record_type"), "sample_id": sid, "group_id": gid, **r})
                            for r in recs])
            if len(pending) >= interleave:
                lines.extend(_interleave(pending, rng))
                pending = []
    lines.extend(_interleave(pending, rng))
    accuracy = correct / total if total else float("nan")
    report = {"accuracy": accuracy, "aggregations": {"num_tasks": n_tasks, "num_attempts": total, "num_correct": correct,
                                                     "num_incorrect": total - correct, "num_system_error": 0, "error_breakdown": {}}}
    lines.append(json.dumps({"timestamp": t.isoformat(), "record_type": "final_report", "sample_id": None, "group_id": None,
                             "final_report": report}))
    stamp = 0
    with path.open("w", encoding="utf-8") as fh:
        for line in lines:
            stamp += 1
            fh.write(line.replace('"timestamp": ""', f'"timestamp": "{(T0 + timedelta(milliseconds=stamp)).isoformat()}"', 1) + "\n")
    return {"accuracy": accuracy}


def _interleave(groups: list[list[str]], rng: random.Random) -> list[str]:
    """Concurrent attempts: records of different attempts mix, each attempt's own order kept."""
    out: list[str] = []
    cursors = [0] * len(groups)
    live = [i for i, g in enumerate(groups) if g]
    while live:
        i = rng.choice(live)
        out.append(groups[i][cursors[i]])
        cursors[i] += 1
        if cursors[i] == len(groups[i]):
            live.remove(i)
    return out


def synth_run(folder: Path, n_seeds: int, *, skill: float, seed: int = 5, model: str = "gpt-4o-mini") -> dict[str, float]:
    """A synth-ai eval folder: compact v3 traces per seed plus the --output-json results (tokens left null, as 0.4.4 does)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    results = []
    for s in range(n_seeds):
        question, answer = _question(rng, s, False)
        ok = rng.random() < skill
        p_tok, c_tok = 300 + rng.randint(0, 40), 18
        trace = {"schema_version": "3.0", "event_history": [{
            "type": "lm_call", "event_type": "lm_call", "timestamp": (T0 + timedelta(seconds=s)).isoformat(),
            "llm_request": {"messages": [{"role": "system", "content": "You are a careful calculator. Call the answer tool."},
                                         {"role": "user", "content": question}]},
            "llm_response": {"message": {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{s}", "type": "function",
                 "function": {"name": "answer", "arguments": json.dumps({"value": answer if ok else "0"})}}]},
                "usage": {"prompt_tokens": p_tok, "completion_tokens": c_tok, "total_tokens": p_tok + c_tok},
                "finish_reason": "tool_calls"},
            "correlation_id": f"trace_{s:06d}"}],
            "markov_blanket_message_history": [],
            "metadata": {"run_id": f"arith-seed-{s}-{s:08x}", "session_id": f"sess_{s:06d}", "trace_correlation_id": f"trace_{s:06d}"}}
        (folder / f"seed_{s}_trace.json").write_text(json.dumps(trace, indent=2))
        score = 1.0 if ok else 0.0
        results.append({"seed": s, "score": score, "reward_mean": score, "outcome_score": score, "events_score": None,
                        "latency_ms": round(800 + rng.random() * 1500, 4), "verifier_score": None, "tokens": None,
                        "cost_usd": None, "error": None})
    config = {"app_id": "arith", "task_app_url": "http://localhost:8103", "env_name": "arith", "policy_name": None,
              "policy_config": {"model": model, "provider": "openai"}, "seeds": list(range(n_seeds)), "ops": [], "concurrency": 4}
    (folder / "eval_results.json").write_text(json.dumps({"config": config, "results": results}, indent=2))
    scores = [r["score"] for r in results]
    return {"mean": sum(scores) / len(scores) if scores else float("nan")}


def make_examples(root: Path) -> None:
    """The bundled comparison data (small, committed): two models on one eval, and a run with attempts."""
    (root / "compare").mkdir(parents=True, exist_ok=True)
    (root / "recorder").mkdir(parents=True, exist_ok=True)
    evals_log(root / "compare" / "arith_gpt-4o-mini.jsonl", 60, skill=0.62, run_id="261120090000ARITHMINI", model="gpt-4o-mini")
    evals_log(root / "compare" / "arith_gpt-4o.jsonl", 60, skill=0.85, run_id="261120100000ARITHFULL", model="gpt-4o")
    nanoeval_log(root / "recorder" / "nanoeval_with_ids_3_attempts.jsonl", 12, 3, skill=0.55, run_id="261120110000NANOIDS3", steps=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=Path, help="write the bundled example files under this folder")
    args = parser.parse_args()
    if args.examples:
        make_examples(args.examples)


if __name__ == "__main__":
    main()
