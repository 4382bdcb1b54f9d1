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


def test_nanoeval_quirks_reach_every_decoding_route(tmp_path: Path):
    """The equality above means something only if the quirk log reaches each route: the tagged schema-1 decoder,
    the second typed decoder for other extras, and the careful path."""
    from loaders.formats import nanoeval_log

    path = tmp_path / "quirks_nano.jsonl"
    path.write_bytes(b"\n".join([json.dumps(r, ensure_ascii=False).encode() for r in QUIRKS_NANO] + RAW_NANO))
    kinds = [type(item).__name__ for _n, _o, _l, item in jsonl.scan_lines(
        path, [], nanoeval_log._FAST_DECODER.decode, fallback=nanoeval_log._ANY_EXTRA_DECODER.decode)]
    assert {"_FastExtra", "_FastMatch", "_FastCompleted", "_AnyExtra", "dict"} <= set(kinds)
