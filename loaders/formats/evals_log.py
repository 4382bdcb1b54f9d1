"""openai/evals LocalRecorder JSONL: a spec line, events keyed by sample_id, one final_report.

See ../shared/formats/recorder-logs.md part A and C.1. The report may sit anywhere after
line 1; events arrive in completion order, so everything is re-sorted by `event_id`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec
import orjson

from loaders.content import to_message
from loaders.formats.index import RunIndex, ScanContext, Span, fields_set, new_row, numeric_sort_key, row_values
from loaders.jsonl import gc_paused, scan_lines
from loaders.schema import GenericEvent, Grade, Message, ModelCall, Run, SampleRow, Transcript
from loaders.timestamps import parse_timestamp, run_id_timestamp

DIALECT = "openai-evals"
KNOWN_TYPES = {"match", "sampling", "metrics", "error", "extra", "raw_sample", "embedding", "cond_logp",
               "pick_option", "function_call"}


def detect(records: list[dict[str, Any]]) -> bool:
    for rec in records:
        if "spec" in rec:
            return True
        if "record_type" in rec:
            return False
        if {"run_id", "event_id", "type", "data"} <= rec.keys():
            return True
        if "final_report" in rec:
            return True
    return False


def model_of(spec: dict[str, Any]) -> str:
    fns = spec.get("completion_fns")
    if isinstance(fns, list) and fns:
        return str(fns[0])
    names = spec.get("model_names")
    if isinstance(names, dict) and isinstance(names.get("completions"), list) and names["completions"]:
        return str(names["completions"][0])
    return str(spec.get("model_name") or "unknown")


class _Sample:
    __slots__ = ("events", "spans")

    def __init__(self) -> None:
        self.events: list[tuple[int, str, Any]] = []  # (event_id, type, data)
        self.spans: list[Span] = []  # in line order, parallel to events


# What a row needs from one event line, as both decoders produce it (the transcript re-reads the line):
# (event_id or None when the line had none (already warned), kind, sample_id, run_id, light payload, model or None)
_Event = tuple[int | None, str, str, Any, Any, str | None]


class _SamplingData(msgspec.Struct):
    """A sampling or match payload as far as a row reads it: prompt/sampled are counted, never materialised."""

    prompt: list[msgspec.Raw] | str | msgspec.UnsetType | None = msgspec.UNSET
    sampled: list[msgspec.Raw] | str | msgspec.UnsetType | None = msgspec.UNSET
    usage: Any = None
    model: Any = None
    correct: Any = msgspec.UNSET  # a match payload's one field a row reads


class _EventLine(msgspec.Struct):
    type: str
    sample_id: str
    event_id: int
    data: _SamplingData
    run_id: Any = None
    spec: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    final_report: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


_EVENT_DECODER = msgspec.json.Decoder(_EventLine)


def fast_event(raw: bytes) -> _Event | None:
    """Typed decode of an ordinary event line; None sends the line to the careful path (spec, report, anything odd)."""
    try:
        ev = _EVENT_DECODER.decode(raw)
    except msgspec.DecodeError:
        return None
    if ev.spec is not msgspec.UNSET or ev.final_report is not msgspec.UNSET:
        return None
    kind = ev.type
    if kind == "sampling":
        data = ev.data
        prompt, sampled = data.prompt, data.sampled
        light = {"usage": data.usage, "n_prompt": len(prompt) if isinstance(prompt, list) else 1,
                 "n_sampled": len(sampled) if isinstance(sampled, list) else 1}
        return (ev.event_id, kind, ev.sample_id, ev.run_id, light, data.model if isinstance(data.model, str) else None)
    if kind == "match":  # a row reads only `correct`: no second parse of the line
        correct = ev.data.correct
        return (ev.event_id, kind, ev.sample_id, ev.run_id, {} if correct is msgspec.UNSET else {"correct": correct}, None)
    if kind in ("metrics", "error"):  # small payloads kept whole: decoded exactly as the careful path does
        try:
            light = orjson.loads(raw)["data"]
        except orjson.JSONDecodeError:
            return None
        return (ev.event_id, kind, ev.sample_id, ev.run_id, light, None)
    return (ev.event_id, kind, ev.sample_id, ev.run_id, None, None)


def scan(lines: Iterable[Any], ctx: ScanContext) -> list[RunIndex]:
    """Scan `jsonl.Line`s (whole records): the careful path."""
    return _scan_items(((line.number, line.offset, line.length, line.record) for line in lines), ctx)


def scan_file(path: Path, ctx: ScanContext) -> list[RunIndex]:
    """Scan a file with the typed fast decoder; lines it declines take the careful path, so the result is the same."""
    with gc_paused():
        return _scan_items(scan_lines(path, ctx.warnings, fast_event), ctx)


def _scan_items(items: Iterable[tuple[int, int, int, Any]], ctx: ScanContext) -> list[RunIndex]:
    spec: dict[str, Any] | None = None
    report: dict[str, Any] | None = None
    report_run_id: str | None = None
    event_run_id: str | None = None
    samples: dict[str, _Sample] = {}
    event_ids: list[int] = []
    models: set[str] = set()
    unknown_types: dict[str, int] = {}
    for number, offset, length, rec in items:
        if type(rec) is tuple:  # a fast digest
            event_id, kind, sample_id, run_id, light, model = rec
        else:
            if "spec" in rec and isinstance(rec["spec"], dict):
                if spec is not None:
                    ctx.warn("second_spec", f"line {number}: a second spec line; the first spec is kept", number)
                    continue
                spec = rec["spec"]
                continue
            if "final_report" in rec:
                if report is not None:
                    ctx.warn("second_report", f"line {number}: a second final_report; the last one is kept", number)
                report = rec["final_report"] if isinstance(rec["final_report"], dict) else {"value": rec["final_report"]}
                report_run_id = rec.get("run_id") or report_run_id
                continue
            kind = rec.get("type")
            sample_id = rec.get("sample_id")
            if not isinstance(kind, str) or "data" not in rec:
                keys = ", ".join(sorted(rec)[:6])
                ctx.warn("unknown_record", f"line {number}: not a spec, event or final_report line (keys: {keys})", number)
                continue
            if sample_id is None:
                ctx.warn("missing_field", f"line {number}: {kind} event without sample_id, not attributed to any sample", number)
                continue
            event_id = rec.get("event_id")
            if not isinstance(event_id, int):
                ctx.warn("missing_field", f"line {number}: event without an integer event_id; ordered by line", number)
                event_id = None
            data = rec.get("data")
            model = data["model"] if kind == "sampling" and isinstance(data, dict) and isinstance(data.get("model"), str) else None
            sample_id, run_id, light = str(sample_id), rec.get("run_id"), _light(kind, data)
        if event_id is None:
            event_id = 10**12 + number
        else:
            event_ids.append(event_id)
        event_run_id = event_run_id or run_id
        if kind not in KNOWN_TYPES:
            unknown_types[kind] = unknown_types.get(kind, 0) + 1
        elif kind in _TYPED and (type(light) is not dict or (kind == "match" and type(light.get("correct", False)) is not bool)):
            _check_types(kind, light, number, ctx)  # only a wrong shape gets here: the check itself is inlined, it runs per line
        if model is not None:
            models.add(model)
        sample = samples.get(sample_id)
        if sample is None:
            sample = samples[sample_id] = _Sample()
        sample.events.append((event_id, kind, light))
        sample.spans.append((offset, length))
    for kind, count in sorted(unknown_types.items()):
        ctx.warn("unknown_event_type", f"{count} event(s) of unknown type {kind!r}, kept as generic events")
    _check_gaps(event_ids, ctx)
    return [_build_run(spec, report, report_run_id, event_run_id, samples, models, ctx)]


_TYPED = frozenset({"match", "sampling", "metrics"})


def _check_types(kind: str, light: Any, number: int, ctx: ScanContext) -> None:
    """Say where a known event's payload has the wrong shape; the event itself is still kept."""
    if not isinstance(light, dict):
        ctx.warn("wrong_type", f"line {number}: {kind} data is not an object; ignored for figures", number)
    elif kind == "match" and "correct" in light and not isinstance(light["correct"], bool):
        ctx.warn("wrong_type", f"line {number}: match.correct is {light['correct']!r}, not true/false; correctness unknown", number)


def _light(kind: str, data: Any) -> Any:
    """Keep only what a row needs; the transcript re-reads the full line later."""
    if kind == "sampling" and isinstance(data, dict):
        prompt = data.get("prompt")
        sampled = data.get("sampled")
        return {
            "usage": data.get("usage"),
            "n_prompt": len(prompt) if isinstance(prompt, list) else 1,
            "n_sampled": len(sampled) if isinstance(sampled, list) else 1,
        }
    if kind in ("match", "metrics", "error"):
        return data
    return None


def _check_gaps(event_ids: list[int], ctx: ScanContext) -> None:
    if not event_ids:
        return
    ids = sorted(set(event_ids))
    missing = (ids[-1] - ids[0] + 1) - len(ids)
    if ids[0] != 0:
        missing += ids[0]
    if missing > 0:
        ctx.warn("event_gap", f"{missing} event id(s) missing between 0 and {ids[-1]}: lines were lost or the log is an excerpt")
    if len(ids) != len(event_ids):
        ctx.warn("duplicate_event_id", f"{len(event_ids) - len(ids)} duplicate event id(s)")


def _build_run(
    spec: dict[str, Any] | None,
    report: dict[str, Any] | None,
    report_run_id: str | None,
    event_run_id: str | None,
    samples: dict[str, _Sample],
    models: set[str],
    ctx: ScanContext,
) -> RunIndex:
    spec = spec or {}
    if not spec:
        ctx.warn("no_spec", "no spec line: eval name and model are unknown (an excerpt or a damaged file?)")
    run_id = str(spec.get("run_id") or event_run_id or report_run_id or Path(ctx.path).stem)
    if report is None:
        ctx.warn("no_final_report", "no final report (run incomplete?)")
    rows: list[SampleRow] = []
    spans: dict[tuple[str, int], list[Span]] = {}
    match_events = match_correct = 0
    for sample_id, sample in samples.items():
        events = sample.events
        if len(events) == 2:  # the usual sample: sampling then match, compared without building a key list
            ordered = events[0][0] <= events[1][0]
        else:
            keys = [e[0] for e in events]
            ordered = keys == sorted(keys)
        if ordered:  # the usual case: a sample's events arrive in event_id order
            spans[(sample_id, 0)] = sample.spans
        else:
            keys = [e[0] for e in events]
            order = sorted(range(len(events)), key=keys.__getitem__)
            events = [events[i] for i in order]
            spans[(sample_id, 0)] = [sample.spans[i] for i in order]
        row, n_graded, n_correct = _row(run_id, sample_id, events)
        match_events += n_graded
        match_correct += n_correct
        rows.append(row)
    rows.sort(key=attrgetter("sort_key"))
    config = {
        "eval_name": spec.get("eval_name"), "base_eval": spec.get("base_eval"), "split": spec.get("split"),
        "model_versions": sorted(models) or None, "spec": spec,
    }
    run_config = spec.get("run_config") if isinstance(spec.get("run_config"), dict) else {}
    eval_spec = run_config.get("eval_spec") if isinstance(run_config.get("eval_spec"), dict) else {}
    config.update({"cls": eval_spec.get("cls"), "args": eval_spec.get("args"), "seed": run_config.get("seed"),
                   "max_samples": run_config.get("max_samples"), "command": run_config.get("command")})
    model = model_of(spec) if spec else None
    eval_name = spec.get("eval_name")
    run = Run(
        run_id=run_id, source=ctx.source, source_kind="recorder", location=ctx.path,
        display_name=f"{eval_name or Path(ctx.path).stem} · {model or 'unknown model'}",
        eval_name=eval_name, model=model,
        created_at=parse_timestamp(spec.get("created_at")) or run_id_timestamp(run_id),
        status="completed" if report is not None else "incomplete",
        dialect=DIALECT, config={k: v for k, v in config.items() if v is not None},
        reported_metrics=report or {}, report_label="final_report" if report is not None else None,
        aggregates={"match_events": match_events, "match_correct": match_correct},
        attribution="ids", has_sample_ids=True, warnings=tuple(ctx.warnings),
    )
    return RunIndex(run=run, rows=rows, spans=spans)


_ROW_NAMES = fields_set(("run_id", "sample_id", "attempt", "sort_key", "score", "correct", "correct_rule", "tokens_in",
                         "tokens_out", "tokens_total", "error", "error_kind", "finish_reason", "n_messages", "attribution",
                         "has_transcript", "flags", "metrics"))  # what a row reports as set, as when it was built by make_row


def _row(run_id: str, sample_id: str, events: list[tuple[int, str, Any]]) -> tuple[SampleRow, int, int]:
    """(row, match events with a true/false `correct`, how many of them are true), in one pass over the events.

    A row is built per sample, so this loop is hot on a 100k-sample log.
    """
    n_matches = n_graded = n_correct = 0
    correct: bool | None = None
    score: float | None = None
    metrics: dict[str, Any] = {}
    errors: list[dict[str, Any]] = []
    tokens_in = tokens_out = tokens_total = 0
    has_usage = False
    n_messages = 0
    for _eid, kind, data in events:
        if kind == "match":
            if type(data) is dict:
                n_matches += 1
                correct = data.get("correct")
                if type(correct) is bool:
                    n_graded += 1
                    n_correct += correct
        elif kind == "sampling" and type(data) is dict:
            n_messages = max(n_messages, data["n_prompt"]) + data["n_sampled"]
            usage = data["usage"]
            if isinstance(usage, dict):
                has_usage = True
                tokens_in += int(usage.get("prompt_tokens") or 0)
                tokens_out += int(usage.get("completion_tokens") or 0)
                tokens_total += int(usage.get("total_tokens") or (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0))
        elif kind == "metrics" and isinstance(data, dict):
            value = data.get("score")
            if isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(value):
                score = float(value)
            metrics.update({k: v for k, v in data.items() if k != "score"})
        elif kind == "error":
            errors.append(data if isinstance(data, dict) else {"message": str(data)})
    correct = correct if isinstance(correct, bool) else None
    rule = None
    if score is None and correct is not None:
        score = 1.0 if correct else 0.0
        rule = "match.correct"
    elif score is not None:
        rule = "metrics.score"
    error = kind_ = None
    if errors:
        last = errors[-1]
        kind_ = str(last.get("type") or "error")
        error = f"{kind_}: {last.get('message', '')}".strip()
    flags = ("several_matches",) if n_matches > 1 else ()
    data = row_values()  # make_row without its keyword handling: this runs per sample
    data["run_id"], data["sample_id"], data["sort_key"] = run_id, sample_id, numeric_sort_key(sample_id)
    data["score"], data["correct"], data["correct_rule"] = score, correct, rule
    if has_usage:
        data["tokens_in"], data["tokens_out"], data["tokens_total"] = tokens_in, tokens_out, tokens_total
    data["error"], data["error_kind"] = error, kind_
    data["finish_reason"] = "error" if errors else ("model_ended" if n_matches else None)
    data["n_messages"], data["has_transcript"], data["flags"], data["metrics"] = n_messages or None, True, flags, metrics
    return new_row(data, _ROW_NAMES), n_graded, n_correct


def build_transcript(run_id: str, sample_id: str, attempt: int, records: list[dict[str, Any]]) -> Transcript:
    """The sample's events in event_id order; repeated prompt prefixes shown once."""
    records = sorted(records, key=lambda r: r.get("event_id") if isinstance(r.get("event_id"), int) else 1 << 60)
    items: list[Any] = []
    shown: list[Message] = []
    grade = Grade()
    for rec in records:
        kind, data = rec.get("type"), rec.get("data")
        when = parse_timestamp(rec.get("created_at"))
        if kind == "raw_sample" and isinstance(data, dict):
            items.extend(_prompt_messages(data.get("input"), shown))
            rest = {k: v for k, v in data.items() if k != "input"}
            if rest:
                items.append(GenericEvent(type="raw_sample", data=rest, timestamp=when))
        elif kind == "sampling" and isinstance(data, dict):
            items.extend(_prompt_messages(data.get("prompt"), shown))
            usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
            items.append(ModelCall(model=data.get("model"), tokens_in=usage.get("prompt_tokens"),
                                   tokens_out=usage.get("completion_tokens"), tokens_total=usage.get("total_tokens"),
                                   timestamp=when))
            sampled = data.get("sampled")
            for text in sampled if isinstance(sampled, list) else [sampled]:
                msg = Message(role="assistant", text=text if isinstance(text, str) else str(text), timestamp=when)
                items.append(msg)
                shown.append(msg)
        elif kind == "match" and isinstance(data, dict):
            items.append(GenericEvent(type="match", data=data, timestamp=when))
            correct = data.get("correct") if isinstance(data.get("correct"), bool) else None
            grade = grade.model_copy(update={"correct": correct, "score": grade.score if grade.score is not None else (
                None if correct is None else float(correct))})
        elif kind == "metrics" and isinstance(data, dict):
            items.append(GenericEvent(type="metrics", data=data, timestamp=when))
            value = data.get("score")
            if isinstance(value, int | float) and not isinstance(value, bool):
                grade = grade.model_copy(update={"score": float(value)})
        elif kind == "error":
            items.append(GenericEvent(type="error", data=data, timestamp=when))
            err = data if isinstance(data, dict) else {"message": str(data)}
            grade = grade.model_copy(update={"error": f"{err.get('type', 'error')}: {err.get('message', '')}",
                                             "finish_reason": "error"})
        else:
            items.append(GenericEvent(type=str(kind), data=data, timestamp=when))
    return Transcript(run_id=run_id, sample_id=sample_id, attempt=0, items=tuple(items), grade=grade, raw=tuple(records))


def _prompt_messages(prompt: Any, shown: list[Message]) -> list[Message]:
    """Messages of a prompt not already shown as the same prefix (prompts repeat history)."""
    if prompt is None:
        return []
    msgs = [to_message(m, default_role="user") for m in prompt] if isinstance(prompt, list) else [Message(role="user", text=str(prompt))]
    common = 0
    while common < min(len(msgs), len(shown)) and (msgs[common].role, msgs[common].text) == (shown[common].role, shown[common].text):
        common += 1
    if common < len(shown):
        shown.clear()
        shown.extend(msgs)
        return msgs
    new = msgs[common:]
    shown.extend(new)
    return new
