"""nanoeval JsonRecorder JSONL: `record_type` lines, one or more runs per file, ids usually null.

See ../shared/formats/recorder-logs.md part B and C.2. Stock nanoeval writes no sample ids,
so attempts are attributed only as far as the log proves it (C.2.2), in this order:
  1. every record carries both ids -> group by them ("ids");
  2. the null-id records cut cleanly into one segment per attempt -> "inferred";
  3. `log_at_end` sampling/match pairs account for every attempt -> "log_at_end";
  4. otherwise aggregates only, with a visible warning. Nothing is attributed by a silent guess.
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec

from loaders import jsonl
from loaders.content import to_message
from loaders.formats.index import RunIndex, ScanContext, Span, TranscriptKey, fields_set, make_row, new_row, numeric_sort_key, row_values
from loaders.jsonl import MAX_LINE_BYTES, READ_BUFFER, CarefulLines, decode_line, gc_paused, scan_lines, valid_utf8
from loaders.schema import (
    Attribution,
    FinishReason,
    GenericEvent,
    Grade,
    GradeCheckpoint,
    LoadWarning,
    Message,
    ModelCall,
    Run,
    SampleRow,
    Transcript,
)
from loaders.timestamps import parse_duration_seconds, parse_timestamp, run_id_timestamp

DIALECT = "nanoeval"
KNOWN_TYPES = {"run_started", "match", "sampling", "sample_completed", "error", "extra", "final_report"}
NO_IDS_MESSAGE = "This nanoeval log has no sample IDs and its records interleave; per-sample results cannot be reconstructed."
INFERRED_LABEL = "grouping inferred from record order"
LOG_AT_END_RULE = "non-zero score counts as correct"
_AUTHOR = re.compile(r"Author: (\S+)")


def detect(records: list[dict[str, Any]]) -> bool:
    """The first line that names a dialect decides (a `spec` line means openai/evals)."""
    for rec in records:
        if "spec" in rec:
            return False
        if "record_type" in rec:
            return True
    return False


# --- reading one record's payload (shared by scan and build_transcript) -------------------------------------------


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


def extra_class(data: Any) -> str:
    """"step", "final" or "other" (free-form extras such as PaperBench's own objects)."""
    if not isinstance(data, dict):
        return "other"
    kind = data.get("type")
    if isinstance(kind, str):
        if kind == "step":
            return "step"
        return "final" if kind.startswith("final_result") else "other"
    graded = "grade" in data or "correct" in data
    if graded and "finish_status" in data:
        return "final"
    if graded and ("elapsed" in data or "autograder_result" in data):
        return "step"
    return "other"


def grade_of(data: dict[str, Any], *, final: bool) -> tuple[float | None, bool | None, str | None, str]:
    """(score, correct, grader_log, rule) derived as nanoeval does: `correct` is not serialized in schema 1."""
    grade = data.get("grade")
    if isinstance(grade, dict):
        score = _num(grade.get("score"))
        log = grade.get("grader_log")
        return score, (score == 1) if score is not None else None, log if isinstance(log, str) else None, "grade.score == 1"
    if "correct" in data:  # schema v0: correct as written
        correct = data["correct"] if isinstance(data["correct"], bool) else None
        log = data.get("grader_log") if final else data.get("autograder_result")
        score = float(correct) if correct is not None else None
        return score, correct, log if isinstance(log, str) else None, "correct as written (schema v0)"
    if not final and grade is None:  # an ungraded step
        return None, False, None, "ungraded step"
    return None, None, None, "no grade"


def finish_reason_of(data: dict[str, Any]) -> FinishReason | None:
    """FinalResult flags to a finish reason; `model_ended` is what nanoeval's length_stats calls it."""
    status = data.get("finish_status")
    if data.get("type") == "final_result_exception" or data.get("exception"):
        return "error"
    if data.get("max_steps_reached") is True:
        return "max_steps"
    if data.get("max_time_reached") is True:
        return "max_time"
    if data.get("max_tokens_reached") is True:
        return "max_tokens"
    if isinstance(status, str) and status.startswith("error"):
        return "error"
    if isinstance(status, str) or data.get("type") == "final_result_successful":
        return "model_ended"
    return None


def exception_of(data: dict[str, Any]) -> tuple[str, str] | None:
    """(error text, exception class) of a FinalResultWithException; None for a successful result."""
    if data.get("type") != "final_result_exception" and not data.get("exception"):
        return None
    exc = str(data.get("exception") or "exception")
    status = data.get("finish_status")
    return (f"{exc} ({status})" if isinstance(status, str) else exc), exc


def convo_messages(convo: Any) -> list[Any] | None:
    """`{"messages": [...]}` or a bare list; None when there is no convo."""
    if isinstance(convo, dict) and isinstance(convo.get("messages"), list):
        return convo["messages"]
    if isinstance(convo, list):
        return convo
    return None


def sampling_shape(rec: dict[str, Any]) -> str:
    """"chat" (mcq_api ChatCompletion), "pretty" (record_pretty), "log_at_end" (grader log) or "other"."""
    prompt, sampled = rec.get("prompt"), rec.get("sampled")
    if isinstance(sampled, dict):
        return "chat"
    if isinstance(prompt, str) and "Author:" in prompt:
        return "pretty"
    if rec.get("sample_id") is not None and isinstance(sampled, str) and not prompt:
        return "log_at_end"
    return "other"


def error_text(rec: dict[str, Any]) -> str:
    err = rec.get("error")
    return str(err) if err is not None else str(rec.get("message") or "error")


_SMALL_INTS = {str(i): i for i in range(64)}  # the usual group ids, "0", "1", ...: a lookup instead of int()
_SMALL_INT_NAMES = tuple(_SMALL_INTS)


def _attempt_int(group_id: Any) -> int | None:
    small = _SMALL_INTS.get(group_id) if type(group_id) is str else None
    if small is not None:
        return small
    if isinstance(group_id, bool):
        return None
    if isinstance(group_id, int):
        return group_id
    try:
        return int(str(group_id))
    except ValueError:
        return None


# --- scan ----------------------------------------------------------------------------------------------------------


class _Rec(msgspec.Struct, gc=False):
    """What a row needs from one line; the transcript re-reads the full line later.

    A msgspec Struct: built in C (a log has ~4 of these per attempt) and untracked by the GC (it holds no cycles).
    """

    line: int
    offset: int  # two ints, not a (offset, length) tuple: a tuple per line is 22 MB of a 1 GB log
    length: int
    kind: str
    sample_id: str | None
    group_id: str | None
    info: dict[str, Any] | _FinalInfo = {}

    @property
    def span(self) -> Span:
        return (self.offset, self.length)


class _FinalInfo(msgspec.Struct, gc=False):
    """A FinalResult as a row reads it. A struct, ~100 bytes where a dict with a dict of flags was ~900: a log
    holds one per attempt. Reads like the dicts of other records (`info["score"]`, `info.get("cls")`)."""

    score: float | None
    correct: bool | None
    grader_log: str | None
    rule: str
    finish_reason: FinishReason | None
    exception: tuple[str, str] | None
    n_messages: int | None
    flags: tuple[Any, Any, Any]  # max_steps_reached, max_time_reached, max_tokens_reached (None when absent)
    cls: str = "final"

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)


_LIMIT_FLAGS = ("max_steps_reached", "max_time_reached", "max_tokens_reached")


_FINAL_RULES: dict[str, str] = {}  # one label string per grading rule, shared by every row that used it


def _final_rule(rule: str) -> str:
    label = _FINAL_RULES.get(rule)
    if label is None:
        label = _FINAL_RULES[rule] = f"FinalResult {rule}"
    return label


_GRADE_RULE = _final_rule("grade.score == 1")
# Row values every attempt row of the typed path starts from (attribution "ids" and no flags are the defaults);
# each copy gets a metrics dict of its own.
_PLAIN_ROW = row_values()
_PLAIN_ROW["has_transcript"] = True
_FINAL_ROW = _PLAIN_ROW.copy()
_FINAL_ROW["correct_rule"] = _GRADE_RULE


def _flag_metrics(info: _FinalInfo) -> dict[str, Any]:
    """The FinalResult's limit flags that were written, as row metrics."""
    metrics: dict[str, Any] = {}
    for name, value in zip(_LIMIT_FLAGS, info.flags, strict=True):
        if value is not None:
            metrics[name] = value
    return metrics


class _Group(msgspec.Struct, gc=False):
    """One attempt's records (C.2.2.1: every record carries both ids), in the order the scan meets them.

    `items` holds the careful path's `_Rec` of a record or, for a line the typed decoder read, only its line number
    (its span is in the file's `_LineSpans`): the typed path keeps no object per line. A group of the usual records
    (Steps, one FinalResult with a grade, at most one match, sample_completed) stays `plain` and gets its row from
    `final` and `match` alone; any other group is rebuilt from its lines, re-read the careful way (`_LineReader`).
    """

    first_line: int
    items: list[Any]
    final: dict[str, Any] | None = None  # the row values its FinalResult gives (_final_values)
    match: Any = msgspec.UNSET  # its match's `correct` (bool or None)
    plain: bool = True
    # The row built when its sample_completed arrived (while its facts were in the CPU's cache), and how many
    # records the group had then: kept if none followed, else the row is built again.
    row: SampleRow | None = None
    row_items: int = 0
    attempt: int | None = None  # its group_id as one of "0".."63", else None (typed path only)
    sort_key: tuple[int, str] | None = None  # its task's numeric_sort_key (typed path only)


class _LineSpans:
    """Where each line of the file starts, in one array (8 bytes a line), and where the file ends: line n's span
    is (starts[n - 1], starts[n] - starts[n - 1])."""

    def __init__(self) -> None:
        self.starts = array("q")

    def span(self, item: int | _Rec) -> Span:
        if type(item) is _Rec:
            return item.span
        start = self.starts[item - 1]  # type: ignore[operator]
        return start, self.starts[item] - start  # type: ignore[index]


@dataclass(slots=True)
class _RunAcc:
    started: _Rec | None
    first_line: int
    first_timestamp: Any = None  # of the run's first record: the run's time when it has no run_started
    # The careful path's records (run_started, reports, samplings, errors, anything unusual), in order; with the
    # typed path off, every record. Run totals need nothing else, but a count of the typed sample_completed.
    recs: list[_Rec] = field(default_factory=list)
    warnings: list[LoadWarning] = field(default_factory=list)
    # Body records (all but final_report) grouped by (sample_id, group_id) as they arrive, so a log whose records
    # all carry both ids (the usual case) is attributed without a second pass over its lines.
    groups: dict[tuple[str, str], _Group] = field(default_factory=dict)
    without_ids: int = 0  # body records lacking an id: when > 0, groups are not used
    odd_group_ids: int = 0  # groups whose group_id is not one of "0".."63": attempts may need renumbering
    run_id_guess: str | None = None  # the run_started's run_id, that rows built during the scan carry
    # Rows built during the scan (one per sample_completed), their order keys and the scores among them; usable as
    # they are when no record reached a group after its row was built (`late_records`). An order key is one int,
    # number * 64 + attempt (number: the sample id's numeric_sort_key number), as ints sort ~3x faster than
    # ((number, sample_id), attempt) tuples; it orders rows as those tuples do while no two sample ids share a
    # number (`numbers_clash` says when they do).
    done_rows: list[SampleRow] = field(default_factory=list)
    done_keys: list[int] = field(default_factory=list)
    numbers_clash: bool = False
    done_scores: list[float] = field(default_factory=list)
    late_records: int = 0
    fast_completed: int = 0

    def add(self, rec: _Rec) -> None:
        self.recs.append(rec)
        if rec.kind == "final_report":
            return
        if rec.sample_id is None or rec.group_id is None:
            self.without_ids += 1
            return
        key = (rec.sample_id, rec.group_id)
        group = self.groups.get(key)
        if group is None:
            self.groups[key] = _Group(rec.line, [rec], plain=False)
            self.odd_group_ids += rec.group_id not in _SMALL_INTS
        else:
            group.items.append(rec)
            group.plain = False
            if group.row is not None:
                self.late_records += 1

    def record_lines(self) -> tuple[int, int | None, int | None]:
        """(count, first line, last line) of the run's records, typed (a line number in a group) or careful."""
        lines = [r.line for r in self.recs]
        lines += [item for group in self.groups.values() for item in group.items if type(item) is int]
        return len(lines), min(lines, default=None), max(lines, default=None)


def _extra_info(data: dict[str, Any], n_messages: int | None) -> dict[str, Any] | _FinalInfo:
    """A Step/FinalResult as a row reads it (`data` may lack its convo: only the message count is needed).

    A Step only needs its class: rows take grades from the FinalResult, so nothing else is kept for it.
    """
    cls = extra_class(data)
    if cls != "final":
        return {"cls": cls}
    score, correct, log, rule = grade_of(data, final=True)
    return _FinalInfo(score=score, correct=correct, grader_log=log, rule=rule, finish_reason=finish_reason_of(data),
                      exception=exception_of(data), n_messages=n_messages, flags=tuple(data.get(k) for k in _LIMIT_FLAGS))


def _light(kind: str, rec: dict[str, Any]) -> dict[str, Any] | _FinalInfo:
    if kind == "match":
        correct = rec.get("correct")
        return {"correct": correct if isinstance(correct, bool) else None}
    if kind == "extra":
        data = rec.get("data")
        if not isinstance(data, dict):
            return {"cls": "other"}
        msgs = convo_messages(data.get("convo"))
        return _extra_info(data, len(msgs) if msgs is not None else None)
    if kind == "sampling":
        shape = sampling_shape(rec)
        info = {"shape": shape}
        sampled, prompt = rec.get("sampled"), rec.get("prompt")
        if shape == "chat" and isinstance(sampled, dict):
            usage = sampled.get("usage")
            choices = sampled.get("choices")
            n_prompt = len(prompt) if isinstance(prompt, list) else (1 if prompt else 0)
            info.update(model=sampled.get("model") if isinstance(sampled.get("model"), str) else None,
                        usage=usage if isinstance(usage, dict) else None,
                        n_messages=n_prompt + (len(choices) if isinstance(choices, list) else 0))
        elif shape == "pretty":
            info["n_messages"] = 1
        elif shape == "log_at_end" or (rec.get("sample_id") is not None and isinstance(sampled, str)):
            info["grader_log"] = sampled
        return info
    if kind == "error":
        return {"text": error_text(rec)}
    return {}


def _id(value: Any) -> str | None:
    return None if value is None else str(value)


class _Convo(msgspec.Struct, gc=False):
    messages: list[msgspec.Raw] | msgspec.UnsetType = msgspec.UNSET


class _Grade(msgspec.Struct, gc=False):
    """A payload's grade object (any other grade but null takes the careful path)."""

    score: Any = None
    grader_log: Any = None


class _Payload(msgspec.Struct, gc=False):
    """A Step/FinalResult payload: the keys a row reads, whatever their type; the convo is only counted.

    `type` is an ordinary field, not a tag: nanoeval writes it last, and a tag found last has msgspec scan the whole
    payload (the convo: most of the line) twice.
    """

    type: Any = None
    grade: _Grade | None = None
    exception: Any = None
    finish_status: Any = None
    max_steps_reached: Any = None
    max_time_reached: Any = None
    max_tokens_reached: Any = None
    convo: _Convo | list[msgspec.Raw] | None = None


class _FastRecord(msgspec.Struct, gc=False):
    """An extra, match or sample_completed line with both ids, as a row reads it. Any other record_type, or a line
    these types do not fit (an extra's payload that is not an object, an id that is missing, null or a number),
    fails in C and takes the careful path: the scan loop checks no types."""

    record_type: Literal["extra", "match", "sample_completed"]
    sample_id: str
    group_id: str
    data: _Payload | msgspec.UnsetType = msgspec.UNSET
    correct: Any = None


# The three record types of almost every line of a log. No Python runs per line to decode.
_FAST_DECODER = msgspec.json.Decoder(_FastRecord)
_UNSET = msgspec.UNSET


def _final_values(data: _Payload) -> dict[str, Any] | None:
    """The row values a FinalResult gives its attempt (what _plain_attempt_row takes from its _FinalInfo), built
    while the line is at hand; None for any FinalResult but the usual one (successful, a grade object, no
    exception), whose attempt is then rebuilt the careful way. Runs once per attempt: every test counts."""
    grade = data.grade
    if type(grade) is not _Grade or data.type != "final_result_successful" or data.exception:
        return None
    score = grade.score
    if type(score) is float:
        if score != score:  # NaN: _num's rule
            score = None
    else:
        score = _num(score)
    steps, time_, tokens, status = data.max_steps_reached, data.max_time_reached, data.max_tokens_reached, data.finish_status
    finish: FinishReason
    if steps is True:  # finish_reason_of, for a successful FinalResult
        finish = "max_steps"
    elif time_ is True:
        finish = "max_time"
    elif tokens is True:
        finish = "max_tokens"
    elif type(status) is str and status.startswith("error"):
        finish = "error"
    else:
        finish = "model_ended"
    values = _FINAL_ROW.copy()
    # _flag_metrics, inlined (runs per attempt): absent and null flags read as None. All three written is the usual
    # case, built in one go: a dict filled key by key is allocated twice.
    if steps is not None and time_ is not None and tokens is not None:
        values["metrics"] = {"max_steps_reached": steps, "max_time_reached": time_, "max_tokens_reached": tokens}
    else:
        values["metrics"] = metrics = {}
        if steps is not None:
            metrics["max_steps_reached"] = steps
        if time_ is not None:
            metrics["max_time_reached"] = time_
        if tokens is not None:
            metrics["max_tokens_reached"] = tokens
    values["score"] = score
    values["correct"] = (score == 1) if score is not None else None
    values["finish_reason"] = finish
    convo = data.convo
    msgs = convo.messages if type(convo) is _Convo else convo
    values["n_messages"] = len(msgs) if type(msgs) is list else None
    log = grade.grader_log
    values["grader_log"] = log if type(log) is str else None
    return values


def scan(lines: Iterable[Any], ctx: ScanContext) -> list[RunIndex]:
    """Scan `jsonl.Line`s (whole records): the careful path."""
    collector = _Collector(ctx, None)
    for line in lines:
        collector.careful(line.number, line.offset, line.length, line.record)
    return _build_runs(collector.accs, collector.last_line, ctx, None)


def scan_file(path: Path, ctx: ScanContext) -> list[RunIndex]:
    """Scan a file with the typed fast decoder; lines it declines take the careful path, so the result is the same.

    A run with a record that lacks an id is attributed from all its records in order (C.2.2.2-4), which the typed
    path does not keep: such a file, rare and old-style, is scanned again the careful way.
    """
    warned = len(ctx.warnings)
    with gc_paused():
        if jsonl.FAST_PATH:
            collector = _Collector(ctx, _LineSpans())
            collector.typed_file(path)
            if not any(acc.without_ids for acc in collector.accs):
                return _build_runs(collector.accs, collector.last_line, ctx, collector.spans)
            del ctx.warnings[warned:], collector
        collector = _Collector(ctx, None)
        for number, offset, length, rec in scan_lines(path, ctx.warnings, None):
            collector.careful(number, offset, length, rec)
        return _build_runs(collector.accs, collector.last_line, ctx, None)


class _Collector:
    """Splits a log at each `run_started` and keeps light per-line facts of each run (a `_RunAcc`)."""

    def __init__(self, ctx: ScanContext, spans: _LineSpans | None) -> None:
        self.ctx = ctx
        self.spans = spans  # set: typed lines keep their spans here, and no object
        self.accs: list[_RunAcc] = []
        self.cur: _RunAcc | None = None
        self.last_line = 0

    def _start(self, started: _Rec | None, number: int, timestamp: Any = None, run_id_guess: str | None = None) -> _RunAcc:
        self.cur = _RunAcc(started=started, first_line=number, first_timestamp=timestamp, run_id_guess=run_id_guess)
        self.accs.append(self.cur)
        return self.cur

    def careful(self, number: int, offset: int, length: int, rec: dict[str, Any]) -> None:
        """One whole record, decoded the careful way."""
        self.last_line = number
        kind = rec.get("record_type")
        kind = kind if isinstance(kind, str) else "(none)"
        light = _Rec(number, offset, length, kind, _id(rec.get("sample_id")), _id(rec.get("group_id")))
        if kind == "run_started":
            spec = rec.get("run_spec") if isinstance(rec.get("run_spec"), dict) else {}
            light.info = {"run_spec": spec, "timestamp": rec.get("timestamp")}
            self._start(light, number, run_id_guess=str(spec["run_id"]) if spec.get("run_id") else None)
            return
        cur = self.cur if self.cur is not None else self._start(None, number, rec.get("timestamp"))
        if kind == "final_report":
            report = rec.get("final_report")
            report = report if isinstance(report, dict) else ({} if report is None else {"value": report})
            light.info = {"report": report, "partial": bool(rec.get("partial") or report.get("partial"))}
        elif kind in KNOWN_TYPES:
            light.info = _light(kind, rec)
        else:
            light.info = {"timestamp": rec.get("timestamp")}
            cur.warnings.append(LoadWarning(code="unknown_record_type", file=self.ctx.path, line=number,
                                            message=f"line {number}: unknown record_type {kind!r}, kept as a generic event"))
        cur.add(light)

    def typed_file(self, path: Path) -> None:
        """Read the file; a line the typed decoder reads (~all lines of a large log) keeps no object: its start in
        `spans`, its number in its attempt's group, and the attempt's row once its sample_completed arrives.
        Everything else goes to `careful`. The loop is scan_lines', inlined: every statement runs per line."""
        spans = self.spans
        assert spans is not None
        starts_append = spans.starts.append
        careful_lines = CarefulLines(path, self.ctx.warnings)
        decode = _FAST_DECODER.decode
        decode_error = msgspec.DecodeError
        cur = self.cur
        groups: dict[tuple[str, str], _Group] = cur.groups if cur is not None else {}
        sort_keys: dict[str, tuple[int, str]] = {}  # one per task, shared by its attempts' rows
        numbers: set[int] = set()  # their numbers, to tell when two tasks share one (see _RunAcc.done_keys)
        numbers_clash = False
        number = offset = 0
        max_bytes = MAX_LINE_BYTES
        with path.open("rb", buffering=READ_BUFFER) as fh:
            for number, raw in enumerate(fh, 1):
                starts_append(offset)
                length = len(raw)
                offset += length
                if length <= max_bytes and (raw.isascii() or valid_utf8(raw)):  # valid UTF-8: see scan_lines
                    try:
                        rec = decode(raw)
                    except decode_error:
                        rec = None
                else:
                    rec = None
                if rec is None:
                    value = careful_lines.record(raw, number)
                    if value is not None:
                        self.careful(number, offset - length, length, value)
                        cur = self.cur
                        groups = cur.groups  # type: ignore[union-attr]
                    continue
                if cur is None:  # records before any run_started
                    cur = self._start(None, number, _timestamp_of(raw))
                    groups = cur.groups
                sample_id, group_id = rec.sample_id, rec.group_id
                key = (sample_id, group_id)
                group = groups.get(key)
                if group is None:
                    sort_key = sort_keys.get(sample_id)
                    if sort_key is None:
                        sort_key = sort_keys[sample_id] = numeric_sort_key(sample_id)
                        if sort_key[0] in numbers:
                            numbers_clash = True
                        numbers.add(sort_key[0])
                    attempt = _SMALL_INTS.get(group_id)
                    if attempt is None:
                        cur.odd_group_ids += 1
                    else:  # kept under its task's one sample_id string and a shared group_id: ~16 MB less on 100k attempts
                        key = (sort_key[1], _SMALL_INT_NAMES[attempt])
                    groups[key] = group = _Group(number, [number], attempt=attempt, sort_key=sort_key)
                else:
                    group.items.append(number)
                    if group.row is not None:  # a record after the attempt's sample_completed
                        cur.late_records += 1
                kind = rec.record_type
                if kind == "extra":
                    data = rec.data
                    if data is _UNSET:
                        group.plain = False
                    elif data.type != "step":
                        values = _final_values(data)
                        if values is None or group.final is not None:
                            group.plain = False
                        else:
                            group.final = values
                elif kind == "match":
                    if group.match is not _UNSET:
                        group.plain = False
                    correct = rec.correct
                    group.match = correct if type(correct) is bool else None
                else:
                    cur.fast_completed += 1
                    if group.plain and not cur.odd_group_ids:  # the attempt is likely over: its row, while all is at hand
                        sort_key = group.sort_key
                        attempt = group.attempt
                        group.row = row = _plain_group_row(cur.run_id_guess, sort_key[1], attempt, group, (), sort_key)  # type: ignore[index]
                        group.row_items = len(group.items)
                        cur.done_rows.append(row)
                        cur.done_keys.append(sort_key[0] * 64 + attempt)  # type: ignore[index,operator]
                        score = row.__dict__["score"]
                        if score is not None:
                            cur.done_scores.append(score)
        starts_append(offset)  # where the file ends: the last line's span
        self.last_line = number
        if numbers_clash:
            for acc in self.accs:
                acc.numbers_clash = True
        careful_lines.finish()


def _timestamp_of(raw: bytes) -> Any:
    """A typed line's timestamp (the typed decoder skips it): only a run without run_started needs one."""
    value, _problem = decode_line(raw.strip())
    return value.get("timestamp") if isinstance(value, dict) else None


def _build_runs(accs: list[_RunAcc], last_line: int, ctx: ScanContext, spans: _LineSpans | None) -> list[RunIndex]:
    """Attribute each run on its own; line-level problems (skipped lines) belong to the run whose lines they sit among."""
    file_warnings = list(ctx.warnings)
    stem = Path(ctx.path).stem
    out: list[RunIndex] = []
    seen: dict[str, int] = {}
    for i, acc in enumerate(accs):
        end = accs[i + 1].first_line - 1 if i + 1 < len(accs) else max(last_line, 1 << 60)
        mine = [w for w in file_warnings if w.line is None or acc.first_line <= w.line <= end
                or (i == 0 and w.line < acc.first_line)]
        index = _build_run(acc, ctx, stem, len(accs), mine, seen, spans)
        ctx.warnings.extend(w for w in index.run.warnings if w not in file_warnings)
        out.append(index)
    return out


def _build_run(acc: _RunAcc, ctx: ScanContext, stem: str, n_runs: int, file_warnings: list[LoadWarning],
               seen: dict[str, int], spans: _LineSpans | None) -> RunIndex:
    warnings: list[LoadWarning] = list(file_warnings) + acc.warnings

    def warn(code: str, message: str, line: int | None = None) -> None:
        warnings.append(LoadWarning(code=code, message=message, file=ctx.path, line=line))

    # Run header.
    if acc.started is not None:
        spec = acc.started.info["run_spec"]
        run_id = str(spec.get("run_id") or f"{stem}:{acc.first_line}")
        if not spec.get("run_id"):
            warn("missing_field", f"line {acc.first_line}: run_started without run_spec.run_id; named after the file and line",
                 acc.first_line)
        created_at = parse_timestamp(acc.started.info.get("timestamp")) or run_id_timestamp(run_id)
    else:
        spec = {}
        run_id = stem if n_runs == 1 else f"{stem}:before-run_started"
        created_at = parse_timestamp(acc.first_timestamp)
        n_records, first, last = acc.record_lines()
        where = f"lines {first}-{last}" if n_records else "no lines"
        warn("no_run_started", f"{n_records} record(s) before any run_started ({where}): kept as a separate run "
             f"{run_id!r} without run id", acc.first_line)
    if run_id in seen:
        seen[run_id] += 1
        warn("duplicate_run_id", f"run id {run_id} appears {seen[run_id]} times in this file; "
             f"this one is {run_id}#{seen[run_id]}", acc.first_line)
        run_id = f"{run_id}#{seen[run_id]}"
    else:
        seen[run_id] = 1

    # Report: the last non-partial, else the last partial (flagged). Reports only come through the careful path.
    reports = [r for r in acc.recs if r.kind == "final_report"]
    finals = [r for r in reports if not r.info["partial"]]
    report: dict[str, Any] | None = None
    label: str | None = None
    if finals:
        report, label = finals[-1].info["report"], "final_report"
        status = "completed"
    elif reports:
        report, label = reports[-1].info["report"], "partial final_report"
        status = "incomplete"
        warn("partial_report", f"only partial final_reports ({len(reports)}); showing the last one, from line "
             f"{reports[-1].line} (the run crashed or is still running?)", reports[-1].line)
    else:
        status = "incomplete"
        warn("no_final_report", "no final report (run incomplete?)")

    with_ids = acc.without_ids == 0
    # The typed path's records (Steps, FinalResults, matches and sample_completed, all with ids) change no run
    # total but the count of sample_completed: totals come from the careful records alone.
    body = [r for r in acc.recs if r.kind != "final_report"]
    aggregates = _aggregates(body)
    aggregates["n_sample_completed"] += acc.fast_completed
    models = sorted({r.info["model"] for r in body if r.kind == "sampling" and r.info.get("model")})

    rows: list[SampleRow]
    attribution: Attribution
    transcripts: Mapping[TranscriptKey, list[Span]]
    scored: list[float] | None = None  # set when the rows come in order already
    if not acc.groups and acc.without_ids == 0:
        rows, transcripts, attribution, has_ids = [], {}, "ids", True
        warn("no_records", "this run holds no sample records")
    elif with_ids:  # every body record carries both ids: grouped already, during the scan
        rows, transcripts, scored = _by_ids(run_id, acc, spans, ctx.path, warn)
        attribution, has_ids = "ids", True
    else:
        has_ids = False
        rows, transcripts, attribution = _attribute_without_ids(run_id, body, report, warn)

    if attribution == "aggregate_only":
        warn("no_sample_ids", NO_IDS_MESSAGE)
    if scored is None:
        rows, scored = _in_order(rows)
    _check_against_report(report, label, attribution, rows, scored, aggregates, warn)
    config: dict[str, Any] = {"run_set_id": spec.get("run_set_id"), "run_spec": spec or None,
                              "model_versions": models or None, "n_runs_in_file": n_runs if n_runs > 1 else None}
    run = Run(
        run_id=run_id, source=ctx.source, source_kind="recorder", location=ctx.path,
        display_name=f"{stem} · {run_id}", eval_name=None, model=models[0] if models else None,
        created_at=created_at, status=status, dialect=DIALECT,
        config={k: v for k, v in config.items() if v is not None},
        reported_metrics=report or {}, report_label=label, attribution=attribution, has_sample_ids=has_ids,
        aggregates=aggregates, warnings=tuple(warnings),
    )
    return RunIndex(run=run, rows=rows, spans=transcripts)


def _aggregates(body: list[_Rec]) -> dict[str, Any]:
    """Counts that need no attribution: shown (and summarised) when rows cannot be built."""
    matches = [r for r in body if r.kind == "match" and r.group_id is None and r.info.get("correct") is not None]
    errors: dict[str, int] = {}
    for r in body:
        if r.kind == "error":
            errors[r.info["text"]] = errors.get(r.info["text"], 0) + 1
    return {
        "match_events": len(matches),
        "match_correct": sum(1 for r in matches if r.info["correct"]),
        "n_error_records": sum(errors.values()),
        "errors_by_text": errors,
        "n_sample_completed": sum(1 for r in body if r.kind == "sample_completed"),
    }


# --- attribution ---------------------------------------------------------------------------------------------------


class _GroupSpans(Mapping[TranscriptKey, list[Span]]):
    """Each attempt's line spans, listed from its group when a transcript is opened: ingest builds no span lists.

    Groups come keyed by (sample_id, attempt), or by (sample_id, group_id) when every group_id is "0".."63" (the
    attempt is then that number): no second dict of 100k keys is built.
    """

    def __init__(self, groups: dict[Any, _Group], spans: _LineSpans | None, *, keyed_by_attempt: bool = False) -> None:
        self._groups = groups
        self._spans = spans
        self._by_attempt = keyed_by_attempt

    def _group(self, key: object) -> _Group | None:
        if self._by_attempt:
            return self._groups.get(key)
        if not (isinstance(key, tuple) and len(key) == 2 and type(key[1]) is int and 0 <= key[1] < len(_SMALL_INT_NAMES)):
            return None
        return self._groups.get((key[0], _SMALL_INT_NAMES[key[1]]))

    def __getitem__(self, key: TranscriptKey) -> list[Span]:
        group = self._group(key)
        if group is None:
            raise KeyError(key)
        if self._spans is None:
            return [r.span for r in group.items]
        return [self._spans.span(item) for item in group.items]

    def __iter__(self) -> Iterator[TranscriptKey]:
        if self._by_attempt:
            return iter(self._groups)
        return ((sample_id, _SMALL_INTS[group_id]) for sample_id, group_id in self._groups)

    def __len__(self) -> int:
        return len(self._groups)

    def __contains__(self, key: object) -> bool:
        return self._group(key) is not None


class _LineReader:
    """Re-reads typed lines the careful way, for the rare attempt that is not plain; opens the file on first use."""

    def __init__(self, path: str, spans: _LineSpans | None) -> None:
        self._path = path
        self._spans = spans
        self._file: Any = None

    def records(self, group: _Group) -> list[_Rec]:
        """The group's records as the careful path builds them (kind, ids and `_light`), in log order."""
        if all(type(item) is _Rec for item in group.items):
            return group.items
        if self._file is None:
            self._file = open(self._path, "rb")  # noqa: SIM115 - closed by close(), after every group is built
        recs: list[_Rec] = []
        for item in group.items:
            if type(item) is _Rec:
                recs.append(item)
                continue
            offset, length = self._spans.span(item)  # type: ignore[union-attr]
            self._file.seek(offset)
            rec, _problem = decode_line(self._file.read(length).strip())
            if not isinstance(rec, dict):  # the file changed since the scan: the line is gone
                continue
            kind = rec.get("record_type")
            kind = kind if isinstance(kind, str) else "(none)"
            recs.append(_Rec(item, offset, length, kind,
                             _id(rec.get("sample_id")), _id(rec.get("group_id")), _light(kind, rec)))
        return recs

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


def _by_ids(run_id: str, acc: _RunAcc, spans: _LineSpans | None, path: str,
            warn: Any) -> tuple[list[SampleRow], Mapping[TranscriptKey, list[Span]], list[float] | None]:
    """C.2.2.1: every record carries both ids; one row per (sample_id, group_id) group. With the rows in order and
    their scores when the scan built every row and nothing followed (the usual log), else in order of first
    appearance and None (see _in_order)."""
    if len(acc.done_rows) == len(acc.groups) and not acc.late_records and not acc.odd_group_ids:
        if acc.numbers_clash:
            rows = _in_order(acc.done_rows)[0]
        else:
            rows = [acc.done_rows[i] for i in sorted(range(len(acc.done_rows)), key=acc.done_keys.__getitem__)]
        if run_id != acc.run_id_guess:  # rows built during the scan carry the run_started's run_id
            for row in rows:
                row.__dict__["run_id"] = run_id
        return rows, _GroupSpans(acc.groups, spans), acc.done_scores
    rows = []
    records: dict[TranscriptKey, _Group] = {}
    used: dict[str, set[int]] = {}
    sort_keys: dict[str, tuple[int, str]] = {}
    reader = _LineReader(path, spans)
    try:
        for (sample_id, group_id), group in acc.groups.items():
            attempt = _attempt_int(group_id)
            taken = used.get(sample_id)
            if taken is None:
                taken = used[sample_id] = set()
                sort_key = sort_keys[sample_id] = numeric_sort_key(sample_id)
            else:
                sort_key = sort_keys[sample_id]
            extra_flags: tuple[str, ...] = ()
            if attempt is None or attempt in taken:
                attempt = max(taken, default=-1) + 1
                extra_flags = (f"group_id={group_id}",)
                warn("attempt_renumbered", f"sample {sample_id}: group_id {group_id!r} is not a distinct integer; "
                     f"shown as attempt {attempt}", group.first_line)
            taken.add(attempt)
            row = group.row
            if row is not None and group.row_items == len(group.items) and group.plain and not extra_flags:
                if run_id != acc.run_id_guess:  # built during the scan, as it stands, but for the run id
                    row.__dict__["run_id"] = run_id
            elif group.plain:
                row = _plain_group_row(run_id, sample_id, attempt, group, extra_flags, sort_key)
            else:
                row = _attempt_row(run_id, sample_id, attempt, reader.records(group), "ids", extra_flags, sort_key)
            rows.append(row)
            records[(sample_id, attempt)] = group
    finally:
        reader.close()
    return rows, _GroupSpans(records, spans, keyed_by_attempt=True), None


def _attribute_without_ids(run_id: str, body: list[_Rec], report: dict[str, Any] | None,
                           warn: Any) -> tuple[list[SampleRow], dict[tuple[str, int], list[Span]], Attribution]:
    """C.2.2.2-4: safe sequential grouping, else complete log_at_end pairs, else aggregates only."""
    segments, reason = _safe_segments(body, report)
    if segments is not None:
        rows, spans = _inferred_rows(run_id, segments, report, warn)
        warn("ids_inferred", f"no sample IDs in this log: each attempt is the records up to its sample_completed or error "
             f"({INFERRED_LABEL}; every safety check passed)")
        return rows, spans, "inferred"
    lae = [r for r in body if r.kind == "sampling" and r.sample_id is not None]
    if lae:
        result, lae_reason = _log_at_end_rows(run_id, body, report, warn)
        if result is not None:
            warn("ids_from_log_at_end", f"sample IDs come only from log_at_end records; each one's match is paired by record "
                 f"order ({LOG_AT_END_RULE}); other records stay unattributed. Sequential grouping was rejected: {reason}")
            return result[0], result[1], "log_at_end"
        warn("grouping_rejected", f"sequential grouping rejected: {reason}; log_at_end pairs rejected: {lae_reason}")
    else:
        warn("grouping_rejected", f"sequential grouping rejected: {reason}")
    return [], {}, "aggregate_only"


def _is_final(r: _Rec) -> bool:
    return r.kind == "extra" and type(r.info) is _FinalInfo  # extras get a _FinalInfo exactly when extra_class is "final"


def _safe_segments(body: list[_Rec], report: dict[str, Any] | None) -> tuple[list[list[_Rec]] | None, str]:
    """Cut at sample_completed/error and apply every check of C.2.2.3; (segments, "") or (None, why not)."""
    segments: list[list[_Rec]] = []
    cur: list[_Rec] = []
    for r in body:
        cur.append(r)
        if r.kind in ("sample_completed", "error"):
            segments.append(cur)
            cur = []
    if cur:
        return None, f"{len(cur)} record(s) follow the last sample_completed/error (from line {cur[0].line})"
    for seg in segments:
        end = seg[-1]
        finals = [i for i, r in enumerate(seg) if _is_final(r)]
        matches = [i for i, r in enumerate(seg) if r.kind == "match" and r.group_id is None]
        lae = [r for r in seg if r.kind == "sampling" and r.sample_id is not None]
        if len(lae) > 1:
            return None, f"the segment ending at line {end.line} holds {len(lae)} log_at_end samplings"
        if end.kind == "error":
            if any(r.kind == "match" for r in seg) or finals:
                return None, f"the error segment ending at line {end.line} holds a match or FinalResult"
            continue
        if len(matches) != 1:
            return None, f"the sample_completed segment ending at line {end.line} holds {len(matches)} null-group matches"
        if len(finals) > 1:
            return None, f"the segment ending at line {end.line} holds {len(finals)} FinalResults"
        if finals:
            final, match = seg[finals[0]], seg[matches[0]]
            if finals[0] > matches[0]:
                return None, f"the FinalResult on line {final.line} follows its match"
            if final.info.get("correct") != match.info.get("correct"):
                return None, f"the FinalResult on line {final.line} disagrees with the match on line {match.line}"
    aggs = report.get("aggregations") if isinstance(report, dict) else None
    if isinstance(aggs, dict):
        done = sum(1 for s in segments if s[-1].kind == "sample_completed")
        expected = (_num(aggs.get("num_correct")) or 0) + (_num(aggs.get("num_incorrect")) or 0)
        if done != expected:
            return None, f"{done} sample_completed segment(s) but the report counts {expected:g} graded attempts"
    return segments, ""


def _final_system_errors(report: dict[str, Any] | None) -> float | None:
    """The report's count of attempts whose last try was a system error (metrics_including_errors)."""
    if not isinstance(report, dict):
        return None
    incl = report.get("metrics_including_errors")
    aggs = incl.get("aggregations") if isinstance(incl, dict) else None
    return _num(aggs.get("num_system_error")) if isinstance(aggs, dict) else None


def _inferred_rows(run_id: str, segments: list[list[_Rec]], report: dict[str, Any] | None,
                   warn: Any) -> tuple[list[SampleRow], dict[tuple[str, int], list[Span]]]:
    """One attempt per safe segment; error segments are system-error attempts unless the report says they were retried."""
    n_errors = sum(1 for s in segments if s[-1].kind == "error")
    final_errors = _final_system_errors(report)
    retried = n_errors > 0 and final_errors == 0
    if retried:
        warn("retried_errors", f"{n_errors} error record(s) are earlier tries that were retried (the report counts 0 system "
             "errors); the last try counts, so they are not rows")
    elif n_errors and final_errors is not None and final_errors != n_errors:
        warn("retried_errors", f"{n_errors} error record(s) but the report counts {final_errors:g} system errors: some were "
             "retried, and which ones cannot be told; all are kept as rows flagged may_be_retried")
    rows: list[SampleRow] = []
    spans: dict[tuple[str, int], list[Span]] = {}
    for n, seg in enumerate(segments, start=1):
        if seg[-1].kind == "error" and retried:
            continue
        lae = next((r for r in seg if r.kind == "sampling" and r.sample_id is not None), None)
        sample_id, attempt = f"#{n}", 0
        if lae is not None:
            sample_id = str(lae.sample_id)
            attempt = _attempt_int(lae.group_id) if _attempt_int(lae.group_id) is not None else 0
        while (sample_id, attempt) in spans:  # the same task and attempt again: keep both, distinctly
            attempt += 1
        flags: tuple[str, ...] = (INFERRED_LABEL,)
        if seg[-1].kind == "error" and final_errors is not None and final_errors != n_errors:
            flags += ("may_be_retried",)
        rows.append(_attempt_row(run_id, sample_id, attempt, seg, "inferred", flags))
        spans[(sample_id, attempt)] = [r.span for r in seg]
    return rows, spans


def _log_at_end_rows(run_id: str, body: list[_Rec], report: dict[str, Any] | None,
                     warn: Any) -> tuple[tuple[list[SampleRow], dict[tuple[str, int], list[Span]]] | None, str]:
    """C.2.2.2, used only when the pairs account for every attempt the log counts."""
    n_lae = sum(1 for r in body if r.kind == "sampling" and r.sample_id is not None)
    n_done = sum(1 for r in body if r.kind == "sample_completed")
    n_errors = sum(1 for r in body if r.kind == "error")
    if n_lae != n_done:
        return None, f"{n_lae} log_at_end sampling(s) but {n_done} sample_completed record(s)"
    final_errors = _final_system_errors(report)
    if n_errors and final_errors != 0:
        why = "the report does not say" if final_errors is None else f"the report counts {final_errors:g} system error(s)"
        return None, f"{n_errors} error record(s) cannot be tied to a task and may be final ({why})"
    pairs: list[tuple[_Rec, _Rec | None]] = []
    pending: dict[str | None, int] = {}
    for r in body:
        if r.kind == "sampling" and r.sample_id is not None:
            if r.group_id in pending:
                warn("ambiguous_pair", f"line {pairs[pending[r.group_id]][0].line}: another log_at_end sampling with group_id "
                     f"{r.group_id!r} follows before any match; its correct is unknown", pairs[pending[r.group_id]][0].line)
            pending[r.group_id] = len(pairs)
            pairs.append((r, None))
        elif r.kind == "match" and r.sample_id is None and r.group_id is not None:
            idx = pending.pop(r.group_id, None)
            if idx is None:
                warn("unpaired_match", f"line {r.line}: match with group_id {r.group_id!r} follows no unpaired log_at_end "
                     "sampling; not attributed", r.line)
            else:
                pairs[idx] = (pairs[idx][0], r)
    if n_errors:
        warn("retried_errors", f"{n_errors} error record(s) are earlier tries that were retried (the report counts 0 system "
             "errors); the last try counts, so they are not rows")
    kept: dict[tuple[str, int], tuple[list[_Rec], tuple[str, ...]]] = {}
    for sampling, match in pairs:
        sample_id = str(sampling.sample_id)
        attempt = _attempt_int(sampling.group_id)
        flags: tuple[str, ...] = ()
        if attempt is None:
            attempt = 0
            flags += (f"group_id={sampling.group_id}",)
        if match is None:
            flags += ("unpaired",)
        key = (sample_id, attempt)
        if key in kept:  # the same task and attempt logged again: the last try counts
            warn("repeated_attempt", f"line {sampling.line}: {sample_id} attempt {attempt} logged again; the last one counts",
                 sampling.line)
            flags += ("repeated",)
            del kept[key]
        kept[key] = ([sampling] + ([match] if match is not None else []), flags)
    rows = [_attempt_row(run_id, sid, att, recs, "log_at_end", flags) for (sid, att), (recs, flags) in kept.items()]
    spans = {key: [r.span for r in recs] for key, (recs, _flags) in kept.items()}
    return (rows, spans), ""


# --- rows ----------------------------------------------------------------------------------------------------------


# The fields _attempt_row passes to make_row: what its rows report as set, whichever way they were built.
_ROW_NAMES = fields_set(("run_id", "sample_id", "attempt", "sort_key", "score", "correct", "correct_rule", "tokens_in",
                         "tokens_out", "tokens_total", "tokens_computed", "error", "error_kind", "finish_reason", "n_messages",
                         "grader_log", "attribution", "has_transcript", "flags", "metrics"))


def _plain_group_row(run_id: str | None, sample_id: str, attempt: int, group: _Group, flags: tuple[str, ...],
                     sort_key: tuple[int, str]) -> SampleRow:
    """_plain_attempt_row for a plain group, from what the scan kept of it: its FinalResult's row values (which
    become the row's own), else its match's `correct`. test_fast_path proves the two give the same rows."""
    data = group.final  # a row built again (records followed its sample_completed) takes them over: one row keeps them
    if data is None:
        data = _PLAIN_ROW.copy()
        data["metrics"] = {}
        correct = group.match
        if correct is not _UNSET:
            data["score"] = float(correct) if correct is not None else None
            data["correct"], data["correct_rule"] = correct, "match.correct"
    data["run_id"], data["sample_id"], data["attempt"], data["sort_key"] = run_id, sample_id, attempt, sort_key
    data["flags"] = flags
    return new_row(data, _ROW_NAMES)


def _plain_attempt_row(run_id: str, sample_id: str, attempt: int, recs: list[_Rec], attribution: Attribution,
                       flags: tuple[str, ...], sort_key: tuple[int, str]) -> SampleRow | None:
    """_attempt_row for the usual attempt (Steps, at most one FinalResult, at most one match, sample_completed),
    in one short pass; None for anything else (samplings, errors, repeats, unknown records), which takes the full rules.

    With no sampling and no error record, _attempt_row's rules reduce to: the FinalResult's grade, else the match's.
    test_fast_path proves the two give the same rows.
    """
    final = match = None
    for r in recs:
        kind = r.kind
        if kind == "extra":
            if type(r.info) is _FinalInfo:
                if final is not None:
                    return None
                final = r
        elif kind == "match":
            if match is not None:
                return None
            match = r
        elif kind != "sample_completed":
            return None
    score: float | None = None
    correct: bool | None = None
    rule: str | None = None
    grader_log = error = error_kind = None
    finish: FinishReason | None = None
    n_messages: int | None = None
    metrics: dict[str, Any] = {}
    if final is not None:
        info: _FinalInfo = final.info  # type: ignore[assignment]
        score, correct, grader_log, finish, n_messages = info.score, info.correct, info.grader_log, info.finish_reason, info.n_messages
        rule = _final_rule(info.rule)
        if info.exception is not None:
            error, error_kind = info.exception
            score = 0.0 if score is None else score
            correct = False if correct is None else correct
        metrics = _flag_metrics(info)
    elif match is not None:
        correct = match.info["correct"]
        score, rule = (float(correct) if correct is not None else None), "match.correct"
    data = row_values()  # make_row's result, without its keyword handling: this runs per attempt
    data["run_id"], data["sample_id"], data["attempt"], data["sort_key"] = run_id, sample_id, attempt, sort_key
    data["score"], data["correct"], data["correct_rule"] = score, correct, rule
    data["error"], data["error_kind"], data["finish_reason"] = error, error_kind, finish
    data["n_messages"], data["grader_log"], data["attribution"] = n_messages, grader_log, attribution
    data["has_transcript"], data["flags"], data["metrics"] = True, flags, metrics
    return new_row(data, _ROW_NAMES)


def _attempt_row(run_id: str, sample_id: str, attempt: int, recs: list[_Rec], attribution: Attribution,
                 flags: tuple[str, ...], sort_key: tuple[int, str] | None = None) -> SampleRow:
    """One attempt from its records: FinalResult first, then the solver's match, then the log_at_end match."""
    sort_key = sort_key or numeric_sort_key(sample_id)
    plain = _plain_attempt_row(run_id, sample_id, attempt, recs, attribution, flags, sort_key)
    if plain is not None:
        return plain
    finals = [r for r in recs if r.kind == "extra" and type(r.info) is _FinalInfo]  # _is_final, inlined: hot
    final = finals[-1] if finals else None
    solver_matches: list[_Rec] = []
    lae_match: _Rec | None = None
    lae_log: str | None = None
    after_lae = False
    last_outcome = -1
    errors: list[tuple[int, _Rec]] = []
    tokens = {"in": 0, "out": 0, "total": 0}
    n_usage = 0
    n_sampled = 0
    for i, r in enumerate(recs):
        if r.kind == "sampling":
            if r.info.get("shape") == "log_at_end" or (r.sample_id is not None and r.info.get("grader_log") is not None):
                after_lae = True
                lae_log = r.info.get("grader_log")
            n_sampled += r.info.get("n_messages") or 0
            usage = r.info.get("usage")
            if isinstance(usage, dict):
                n_usage += 1
                tokens["in"] += int(_num(usage.get("prompt_tokens")) or 0)
                tokens["out"] += int(_num(usage.get("completion_tokens")) or 0)
                tokens["total"] += int(_num(usage.get("total_tokens")) or
                                       (_num(usage.get("prompt_tokens")) or 0) + (_num(usage.get("completion_tokens")) or 0))
        elif r.kind == "match":
            last_outcome = i
            if after_lae:
                lae_match, after_lae = r, False
            else:
                solver_matches.append(r)
        elif r.kind == "sample_completed" or (r.kind == "extra" and type(r.info) is _FinalInfo):
            last_outcome = i
        elif r.kind == "error":
            errors.append((i, r))
    score: float | None = None
    correct: bool | None = None
    rule: str | None = None
    grader_log = lae_log
    finish: FinishReason | None = None
    n_messages = n_sampled or None
    error = error_kind = None
    if final is not None:
        info = final.info
        score, correct = info["score"], info["correct"]
        grader_log = info["grader_log"] if info["grader_log"] is not None else lae_log
        rule = _final_rule(info["rule"])
        finish = info["finish_reason"]
        n_messages = info["n_messages"] if info["n_messages"] is not None else n_messages
        if info["exception"] is not None:
            error, error_kind = info["exception"]
            score = 0.0 if score is None else score
            correct = False if correct is None else correct
    elif solver_matches:
        correct = solver_matches[-1].info["correct"]
        score, rule = (float(correct) if correct is not None else None), "match.correct"
    elif lae_match is not None:
        correct = lae_match.info["correct"]
        score, rule = (float(correct) if correct is not None else None), LOG_AT_END_RULE
    if len(finals) > 1:
        flags += ("several_final_results",)
    if len(solver_matches) > 1:
        flags += ("several_matches",)
    metrics: dict[str, Any] = {}
    final_errors = [r for i, r in errors if i > last_outcome]
    retried = [r for i, r in errors if i <= last_outcome]
    if final_errors:  # the last try ended in a system error
        error, error_kind = final_errors[-1].info["text"], "system_error"
        score = correct = None
        finish, rule = "error", None
    if retried:
        flags += ("retried_after_error",)
        metrics["retried_errors"] = [r.info["text"] for r in retried]
    if final is not None:
        metrics.update(_flag_metrics(final.info))
    return make_row(
        run_id=run_id, sample_id=sample_id, attempt=attempt, sort_key=sort_key,
        score=score, correct=correct, correct_rule=rule,
        tokens_in=tokens["in"] if n_usage else None, tokens_out=tokens["out"] if n_usage else None,
        tokens_total=tokens["total"] if n_usage else None, tokens_computed=n_usage > 1,
        error=error, error_kind=error_kind, finish_reason=finish, n_messages=n_messages, grader_log=grader_log,
        attribution=attribution, has_transcript=True, flags=flags, metrics=metrics,
    )


def _in_order(rows: list[SampleRow]) -> tuple[list[SampleRow], list[float]]:
    """The rows by (sort_key, attempt), and the scores (system errors left out) the report's accuracy is checked
    against, in scan order: in one pass, as each pass over 100k rows reads memory the CPU's cache no longer holds."""
    keys: list[tuple[tuple[int, str], int]] = []
    scored: list[float] = []
    for row in rows:
        values = row.__dict__
        keys.append((values["sort_key"], values["attempt"]))
        score = values["score"]
        if score is not None and (values["error"] is None or values["error_kind"] != "system_error"):
            scored.append(score)
    return [rows[i] for i in sorted(range(len(rows)), key=keys.__getitem__)], scored


def _check_against_report(report: dict[str, Any] | None, label: str | None, attribution: Attribution,
                          rows: list[SampleRow], scored: list[float], aggregates: dict[str, Any], warn: Any) -> None:
    """Our mean must match the report's accuracy; when it cannot, say why instead of staying silent."""
    reported = _num(report.get("accuracy")) if isinstance(report, dict) else None
    if reported is None:
        return
    if attribution == "aggregate_only" or not rows:
        n, k = aggregates["match_events"], aggregates["match_correct"]
        ours = k / n if n else None
        counted = f"{n} null-group match record(s)"
    else:
        ours = math.fsum(scored) / len(scored) if scored else None  # fsum: the same whatever the rows' order
        counted = f"{len(scored)} scored attempt(s)"
    if ours is not None and abs(ours - reported) <= 1e-9:
        return
    reason = ""
    aggs = report.get("aggregations") if isinstance(report, dict) else None
    n_counted = int(counted.split(" ", 1)[0])
    if isinstance(aggs, dict):
        graded = (_num(aggs.get("num_correct")) or 0) + (_num(aggs.get("num_incorrect")) or 0)
        if graded != n_counted:
            reason = f"; the report counts {graded:g} graded attempt(s) against our {counted} (lines missing, or an excerpt?)"
    if attribution == "log_at_end":
        reason += "; log_at_end matches use bool(score), so any non-zero score counts as correct there"
    if label == "partial final_report":
        reason += "; the report is partial, written before the run ended"
    shown = "none" if ours is None else f"{ours:.4f}"
    warn("report_mismatch",
         f"our mean score ({shown}, from {counted}) differs from the report's accuracy ({reported:.4f}){reason}")


# --- transcript ----------------------------------------------------------------------------------------------------


def build_transcript(run_id: str, sample_id: str, attempt: int, records: list[dict[str, Any]]) -> Transcript:
    """One attempt's records in log order: FinalResult convo, Step checkpoints, model calls, events."""
    items: list[Any] = []
    grade = Grade()
    final_seen = False
    lae_pending = False
    record_error = False  # grade.error came from an `error` record; a later outcome means that try was retried
    for rec in records:
        kind = rec.get("record_type")
        when = parse_timestamp(rec.get("timestamp"))
        if record_error and kind in ("extra", "match", "sample_completed") and (
                kind != "extra" or extra_class(rec.get("data")) == "final"):
            grade = grade.model_copy(update={"error": None, "finish_reason": None})
            record_error = False
        if kind == "extra":
            data = rec.get("data")
            cls = extra_class(data)
            if cls == "step" and isinstance(data, dict):
                score, correct, log, _rule = grade_of(data, final=False)
                items.append(GradeCheckpoint(score=score, correct=correct, grader_log=log,
                                             elapsed_s=parse_duration_seconds(data.get("elapsed"))))
            elif cls == "final" and isinstance(data, dict):
                final_seen = True
                msgs = convo_messages(data.get("convo"))
                if msgs is not None:
                    items.extend(to_message(m) for m in msgs)
                elif data.get("convo") is not None:
                    items.append(GenericEvent(type="convo", data=data.get("convo"), timestamp=when))
                score, correct, log, _rule = grade_of(data, final=True)
                exc = exception_of(data)
                limits = {k: data.get(k) if isinstance(data.get(k), bool) else None
                          for k in ("max_steps_reached", "max_time_reached", "max_tokens_reached")}
                grade = Grade(
                    score=0.0 if score is None and exc else score, correct=False if correct is None and exc else correct,
                    grader_log=log, finish_reason=finish_reason_of(data), error=exc[0] if exc else None, **limits,
                )
                rest = {k: v for k, v in data.items() if k not in ("convo", "grade")}
                items.append(GenericEvent(type=str(data.get("type") or "final_result"), data=rest, timestamp=when))
            else:
                items.append(GenericEvent(type="extra", data=data, timestamp=when))
        elif kind == "sampling":
            shape = sampling_shape(rec)
            items.extend(_sampling_items(rec, shape, when))
            if shape == "log_at_end":
                lae_pending = True
                if grade.grader_log is None:
                    grade = grade.model_copy(update={"grader_log": rec.get("sampled")})
        elif kind == "match":
            items.append(GenericEvent(type="match", data=_payload(rec), timestamp=when))
            correct = rec.get("correct") if isinstance(rec.get("correct"), bool) else None
            if not final_seen and correct is not None and (grade.correct is None or not lae_pending):
                grade = grade.model_copy(update={"correct": correct, "score": float(correct)})
            lae_pending = False
        elif kind == "error":
            items.append(GenericEvent(type="error", data=_payload(rec), timestamp=when))
            grade = grade.model_copy(update={"error": error_text(rec), "finish_reason": "error", "score": None, "correct": None})
            record_error = True
        else:
            items.append(GenericEvent(type=str(kind), data=_payload(rec), timestamp=when))
    return Transcript(run_id=run_id, sample_id=sample_id, attempt=attempt, items=tuple(items), grade=grade, raw=tuple(records))


def _payload(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if k not in ("timestamp", "record_type")}


def _sampling_items(rec: dict[str, Any], shape: str, when: Any) -> list[Any]:
    """A sampling record as messages (and a ModelCall for mcq_api's ChatCompletion)."""
    prompt, sampled = rec.get("prompt"), rec.get("sampled")
    if shape == "chat" and isinstance(sampled, dict):
        out: list[Any] = [to_message(m, default_role="user") for m in prompt] if isinstance(prompt, list) else (
            [Message(role="user", text=prompt)] if isinstance(prompt, str) and prompt else [])
        usage = sampled.get("usage") if isinstance(sampled.get("usage"), dict) else {}
        choices = sampled.get("choices") if isinstance(sampled.get("choices"), list) else []
        first = choices[0] if choices and isinstance(choices[0], dict) else {}
        out.append(ModelCall(model=sampled.get("model") if isinstance(sampled.get("model"), str) else None,
                             tokens_in=usage.get("prompt_tokens"), tokens_out=usage.get("completion_tokens"),
                             tokens_total=usage.get("total_tokens"),
                             finish_reason=first.get("finish_reason") if isinstance(first.get("finish_reason"), str) else None,
                             timestamp=when))
        for choice in choices:
            msg = choice.get("message") if isinstance(choice, dict) else None
            out.append(to_message(msg if msg is not None else choice, default_role="assistant"))
        return out
    if shape == "pretty":
        found = _AUTHOR.search(str(prompt))
        return [Message(role=found.group(1) if found else "unknown", text=str(sampled) if sampled is not None else "",
                        timestamp=when, metadata={"header": str(prompt).strip()})]
    if shape == "log_at_end":
        return [GenericEvent(type="log_at_end", data=_payload(rec), timestamp=when)]
    out = []
    if isinstance(prompt, list):
        out.extend(to_message(m, default_role="user") for m in prompt)
    elif isinstance(prompt, str) and prompt:
        out.append(Message(role="user", text=prompt, timestamp=when))
    for text in sampled if isinstance(sampled, list) else ([] if sampled is None else [sampled]):
        out.append(to_message(text, default_role="assistant") if not isinstance(text, str)
                   else Message(role="assistant", text=text, timestamp=when))
    return out or [GenericEvent(type="sampling", data=_payload(rec), timestamp=when)]
