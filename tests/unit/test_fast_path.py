"""The typed fast decoders give exactly what the careful path gives, on every example and quirk fixture."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from loaders import jsonl
from loaders.schema import SampleRow
from loaders.sources.recorder import RecorderLoader
from tests.conftest import EXAMPLES, FIXTURES

LOGS = sorted([*EXAMPLES.rglob("*.jsonl"), *(FIXTURES / "evals").glob("*.jsonl"), *(FIXTURES / "nanoeval").glob("*.jsonl"),
               *(FIXTURES / "compare").glob("*.jsonl")])


def scan(path: Path, fast: bool) -> tuple:
    previous = jsonl.set_fast_path(fast)
    try:
        runs, warnings = RecorderLoader(str(path))._scan()
    finally:
        jsonl.set_fast_path(previous)
    return ([r.run for r in runs], [r.rows for r in runs], [dict(r.spans) for r in runs], warnings)


@pytest.mark.parametrize("path", [p for p in LOGS if RecorderLoader.handles(str(p))], ids=lambda p: p.name)
def test_fast_path_equals_careful_path(path: Path):
    fast, careful = scan(path, True), scan(path, False)
    for part_fast, part_careful in zip(fast, careful, strict=True):  # repr: a quirk fixture scores NaN on purpose
        assert [repr(x) for x in part_fast] == [repr(x) for x in part_careful]
    for rows in fast[1]:
        for row in rows:  # rows are built without per-row validation: validating them changes nothing
            again = SampleRow.model_validate(row.model_dump())
            assert repr(again) == repr(row)
            assert row.model_fields_set <= set(SampleRow.model_fields)


def test_every_fixture_is_covered():
    assert len([p for p in LOGS if RecorderLoader.handles(str(p))]) >= 25


QUIRKS_EVALS = [
    {"spec": {"run_id": "Q1", "eval_name": "q.dev.v0", "completion_fns": ["m"]}},
    {"run_id": "Q1", "event_id": 0, "sample_id": "q.dev.0", "type": "sampling",
     "data": {"prompt": "a plain string prompt", "sampled": ["x"], "model": "m-1", "usage": {"prompt_tokens": 3}}},
    {"run_id": "Q1", "event_id": 1, "sample_id": "q.dev.0", "type": "match", "data": {"correct": True}},
    {"run_id": "Q1", "event_id": True, "sample_id": "q.dev.1", "type": "match", "data": {"correct": False}},
    {"run_id": "Q1", "event_id": 3, "sample_id": 7, "type": "metrics", "data": {"score": 0.5, "big": 10**30}},
    {"run_id": "Q1", "event_id": 4, "sample_id": "q.dev.2", "type": "error", "data": "boom"},
    {"run_id": "Q1", "event_id": 5, "sample_id": "q.dev.3", "type": "sampling", "data": None},
    {"run_id": "Q1", "event_id": 6, "sample_id": "q.dev.3", "type": "weird", "data": {"x": 1}},
    {"run_id": "Q1", "event_id": 7, "sample_id": "q.dev.4", "type": "sampling",
     "data": {"prompt": [{"role": "user", "content": "héllo ✓"}], "sampled": "y", "usage": {"total_tokens": 9}}},
]
RAW_EVALS = [
    b'{"run_id": "Q1", "event_id": 8, "sample_id": "q.dev.5", "type": "metrics", "data": {"score": NaN}}',
    b'{"run_id": "Q1", "event_id": 9, "sample_id": "q.dev.6", "type": "match", "data": {"correct": true, "note": "\xff\xfe"}}',
    b'{"run_id": "Q1", "event_id": 10, "sample_id": "q.dev.7", "type": "sampling", "data": {"prompt": ["\\ud800"], "usage": null}}',
    b'  {"run_id": "Q1", "event_id": 11, "sample_id": "q.dev.8", "type": "match", "data": {"correct": true}}\r',
    b"[1, 2]",
    b"",
    b'{"final_report": {"accuracy": 0.5}, "run_id": "Q1"}',
    b'{"run_id": "Q1", "event_id": 12, "sample_id": "q.dev.9", "type": "match", "data": {"correct": tr',
]
QUIRKS_NANO = [
    {"record_type": "run_started", "run_spec": {"run_id": "N1"}, "timestamp": "2026-01-01T00:00:00Z", "sample_id": None, "group_id": None},
    {"record_type": "extra", "sample_id": "t_0", "group_id": "0", "data": {"type": "step", "convo": {"messages": [1, 2]}}},
    {"record_type": "extra", "sample_id": "t_0", "group_id": "0",
     "data": {"type": "final_result_successful", "grade": {"score": 1.0, "grader_log": "ok"}, "convo": [{"a": 1}],
              "finish_status": "finished-successfully", "max_steps_reached": False}},
    {"record_type": "match", "sample_id": "t_0", "group_id": "0", "correct": True},
    {"record_type": "sample_completed", "sample_id": "t_0", "group_id": "0"},
    {"record_type": "extra", "sample_id": 1, "group_id": 0, "data": {"correct": True, "finish_status": "x", "convo": "text"}},
    {"record_type": "extra", "sample_id": "t_1", "group_id": "1", "data": {"grade": None, "elapsed": "P0D", "convo": {"messages": None}}},
    {"record_type": "extra", "sample_id": "t_1", "group_id": "1", "data": "not an object"},
    {"record_type": "match", "sample_id": "t_1", "group_id": "1", "correct": "yes"},
    {"record_type": "sample_completed", "sample_id": True, "group_id": "1"},
    {"record_type": "extra", "sample_id": "t_2", "group_id": "0", "data": {"type": 5, "grade": {"score": 0}, "finish_status": "error-x",
                                                                            "exception": "Boom", "convo": {"other": 1}}},
    {"record_type": "error", "sample_id": "t_2", "group_id": "0", "error": "infra"},
    {"record_type": "sample_completed", "sample_id": "t_2", "group_id": "0"},
    {"record_type": "mystery", "sample_id": "t_2", "group_id": "0"},
]
RAW_NANO = [
    b'{"record_type": "extra", "sample_id": "t_3", "group_id": "0", "data": {"type": "final_result_successful", "grade": {"score": NaN}}}',
    b'{"record_type": "match", "sample_id": "t_3", "group_id": "0", "correct": true, "note": "\xc3\x28"}',
    b'{"record_type": "final_report", "final_report": {"accuracy": 0.5}, "sample_id": null, "group_id": null}',
    b'{"record_type": "sample_completed", "sample_id": "t_3", "group_id": "0"',
]


@pytest.mark.parametrize(("records", "raw", "name"), [(QUIRKS_EVALS, RAW_EVALS, "quirks_evals.jsonl"),
                                                      (QUIRKS_NANO, RAW_NANO, "quirks_nano.jsonl")])
def test_quirks_take_the_same_path(tmp_path: Path, records: list, raw: list, name: str):
    path = tmp_path / name
    path.write_bytes(b"\n".join([json.dumps(r, ensure_ascii=False).encode() for r in records] + raw))
    fast, careful = scan(path, True), scan(path, False)
    assert [repr(x) for x in fast] == [repr(x) for x in careful]
    assert fast[1][0], "the quirk log still yields rows"


def _attempt(sample: str, group: str, score: float, *, late_match: bool = False, with_final: bool = True) -> list[dict]:
    """One usual nanoeval attempt (Step, FinalResult, match, sample_completed); `late_match` writes the match last,
    `with_final=False` leaves the FinalResult out."""
    ids = {"sample_id": sample, "group_id": group}
    final = {"record_type": "extra", **ids, "data": {"type": "final_result_successful", "grade": {"score": score},
                                                      "convo": {"messages": [{"role": "user", "content": "q"}]}}}
    match = {"record_type": "match", **ids, "correct": score == 1}
    recs = [{"record_type": "extra", **ids, "data": {"type": "step", "convo": {"messages": []}}}, final, match,
            {"record_type": "sample_completed", **ids}]
    recs = [recs[0], recs[1], recs[3], recs[2]] if late_match else recs
    return recs if with_final else [recs[0], *recs[2:]]


def _started(run_id: str) -> dict:
    return {"record_type": "run_started", "run_spec": {"run_id": run_id}, "sample_id": None, "group_id": None}


ATTEMPT_ORDERS = {
    "a_match_after_sample_completed": [_started("R1"), *_attempt("s1", "0", 1.0, late_match=True, with_final=False),
                                       *_attempt("s1", "1", 0.0)],
    "an_error_after_sample_completed": [_started("R1"), *_attempt("s1", "0", 1.0), *_attempt("s1", "1", 0.0),
                                        {"record_type": "error", "sample_id": "s1", "group_id": "1", "error": "late"}],
    "an_attempt_without_sample_completed": [_started("R1"), *_attempt("s1", "0", 1.0)[:-1], *_attempt("s1", "1", 0.0)],
    "a_group_id_to_renumber": [_started("R1"), *_attempt("s1", "0", 1.0), *_attempt("s1", "00", 0.0), *_attempt("s2", "x", 1.0)],
    "two_runs_with_one_run_id": [_started("R1"), *_attempt("s1", "0", 1.0), _started("R1"), *_attempt("s1", "0", 0.0)],
    "records_before_run_started": [*_attempt("s1", "0", 1.0), _started("R2"), *_attempt("s1", "0", 0.0)],
    "a_late_record_before_run_started": [*_attempt("s1", "0", 1.0), *_attempt("s1", "1", 0.0, late_match=True, with_final=False)],
    "two_sample_ids_with_one_number": [_started("R1"), *_attempt("b_1", "0", 1.0), *_attempt("a_2", "0", 0.0),
                                       *_attempt("a_1", "1", 0.0), *_attempt("a_1", "0", 1.0)],
}


@pytest.mark.parametrize("name", ATTEMPT_ORDERS)
def test_rows_built_during_the_scan_equal_the_careful_ones(tmp_path: Path, name: str):
    """Rows the typed path builds when an attempt's sample_completed arrives are rebuilt or patched when the rest of
    the log says otherwise: a record that follows, attempts to renumber, a run id known only at the end."""
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ATTEMPT_ORDERS[name]) + "\n")
    fast, careful = scan(path, True), scan(path, False)
    for part_fast, part_careful in zip(fast, careful, strict=True):
        assert [repr(x) for x in part_fast] == [repr(x) for x in part_careful]
    assert all(rows for rows in fast[1])


def test_fast_path_is_taken(monkeypatch):
    """On a clean log only format detection (20 records) and the spec and report lines use the careful decoder."""
    calls = []
    original = jsonl.decode_line
    monkeypatch.setattr(jsonl, "decode_line", lambda raw: calls.append(1) or original(raw))
    rows = scan(EXAMPLES / "compare" / "arith_gpt-4o.jsonl", True)[1][0]
    assert len(rows) == 60 and len(calls) <= 22
    calls.clear()
    scan(EXAMPLES / "compare" / "arith_gpt-4o.jsonl", False)
    assert len(calls) > 100
    assert not math.isnan(rows[0].score or 0.0)


def test_nanoeval_quirks_reach_every_route(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The equality above means something only if the quirk log reaches each route: lines the typed decoder reads
    and lines it declines; attempts built from the facts the scan kept, and attempts re-read the careful way."""
    from loaders.formats import nanoeval_log

    path = tmp_path / "quirks_nano.jsonl"
    path.write_bytes(b"\n".join([json.dumps(r, ensure_ascii=False).encode() for r in QUIRKS_NANO] + RAW_NANO))
    kinds = [item.record_type if type(item) is nanoeval_log._FastRecord else "careful" for _n, _o, _l, item in
             jsonl.scan_lines(path, [], nanoeval_log._FAST_DECODER.decode)]
    assert {"extra", "match", "sample_completed", "careful"} <= set(kinds)
    plain: list[str] = []
    reread: list[bool] = []
    plain_row, records = nanoeval_log._plain_group_row, nanoeval_log._LineReader.records
    monkeypatch.setattr(nanoeval_log, "_plain_group_row", lambda *a: plain.append(a[1]) or plain_row(*a))
    monkeypatch.setattr(nanoeval_log._LineReader, "records",
                        lambda self, group: reread.append(any(type(i) is int for i in group.items)) or records(self, group))
    scan(path, True)
    assert plain == ["t_0"], "the usual attempt is built from its typed facts alone"
    assert any(reread), "an unusual attempt's typed lines are re-read the careful way"


def test_a_record_without_ids_rescans_the_file_the_careful_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Sequential attribution needs every record in order, which the typed path does not keep."""
    path = tmp_path / "no_ids.jsonl"
    records = [*QUIRKS_NANO[:5], {"record_type": "match", "sample_id": None, "group_id": None, "correct": True}]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    from loaders.formats import nanoeval_log

    calls: list[str] = []
    typed_file, scan_lines = nanoeval_log._Collector.typed_file, nanoeval_log.scan_lines
    monkeypatch.setattr(nanoeval_log._Collector, "typed_file", lambda self, p: calls.append("typed") or typed_file(self, p))
    monkeypatch.setattr(nanoeval_log, "scan_lines", lambda p, w, fast: calls.append(f"careful, fast={fast}") or scan_lines(p, w, fast))
    fast, careful = scan(path, True), scan(path, False)
    assert calls == ["typed", "careful, fast=None", "careful, fast=None"]
    assert [repr(x) for x in fast[0]] == [repr(x) for x in careful[0]]
