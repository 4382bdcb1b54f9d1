"""openai/evals LocalRecorder logs: golden files, one per quirk of the format."""

from __future__ import annotations

import math

import pytest

from loaders import query, resolve
from loaders.schema import Message, ModelCall
from tests.conftest import EXAMPLES, FIXTURES

EVALS = FIXTURES / "evals"


def load(path):
    loader = resolve(str(path))
    listing = loader.list_runs()
    assert len(listing.runs) == 1
    run = listing.runs[0]
    return loader, run, loader.load_samples(run.run_id)


def codes(run) -> list[str]:
    return [w.code for w in run.warnings]


def test_generated_example_all_event_types():
    loader, run, rows = load(EXAMPLES / "recorder" / "evals_generated_all-event-types.jsonl")
    assert run.run_id == "2611221313146ENXKQ5Z"
    assert run.model == "gpt-3.5-turbo"
    assert run.eval_name == "test-match.s1.simple-v0"
    assert run.reported_metrics["accuracy"] == 1.0
    assert run.created_at is not None and run.created_at.utcoffset().total_seconds() == 0
    (row,) = rows
    assert (row.correct, row.score, row.tokens_total, row.error) == (True, 1.0, 26, "ValueError: bad output")
    assert row.metrics == {"accuracy": 1.0, "f1_score": 1.0}
    transcript = loader.load_transcript(run.run_id, row.sample_id)
    roles = [(m.role, m.text) for m in transcript.messages]
    assert ("assistant", "2") in roles
    calls = [i for i in transcript.items if isinstance(i, ModelCall)]
    assert calls[0].model == "gpt-3.5-turbo-0125" and calls[0].tokens_total == 26
    assert transcript.grade.correct is True and transcript.grade.error == "ValueError: bad output"
    assert len(transcript.raw) == 6


def test_report_on_line2_and_completion_order():
    _, run, rows = load(EVALS / "report_on_line2.jsonl")
    assert [r.sample_id for r in rows] == ["arith.dev.1", "arith.dev.2", "arith.dev.9", "arith.dev.10"]
    summary = query.summarize(run, rows)
    assert summary["score_mean"] == run.reported_metrics["accuracy"] == 0.5
    assert summary["tokens_total"] == 88 == run.reported_metrics["usage_total_tokens"]
    assert run.warnings == ()


def test_old_spec_and_report_without_run_id():
    loader, run, rows = load(EVALS / "old_spec_report_last.jsonl")
    assert run.model == "gpt-3.5-turbo"
    assert run.run_id == "230301120000OLDSPEC1"
    assert run.reported_metrics == {"accuracy": 1.0}
    assert [r.tokens_total for r in rows] == [None, None]  # unknown, never 0
    transcript = loader.load_transcript(run.run_id, "sarc.test.5")
    assert transcript.messages[0].text == "yeah right"


def test_report_mid_file_sampled_string_and_null_metric():
    loader, run, rows = load(EVALS / "report_mid_file.jsonl")
    assert run.status == "completed"
    assert query.summarize(run, rows)["score_mean"] == 0.5
    transcript = loader.load_transcript(run.run_id, "srl.test.4")
    assert [m.text for m in transcript.messages if m.role == "assistant"] == ["B"]
    assert rows[1].metrics == {"choice": "E"}


def test_truncated_last_line_and_no_report():
    _, run, rows = load(EVALS / "truncated_no_report.jsonl")
    assert run.status == "incomplete"
    assert codes(run)[:3] == ["lines_skipped", "skipped_line", "no_final_report"]
    assert "truncated last line" in run.warnings[1].message and run.warnings[1].line == 5
    assert [r.sample_id for r in rows] == ["arith.dev.0", "arith.dev.1"]
    assert rows[0].correct is True and rows[1].correct is None


def test_bad_lines_keep_every_valid_record():
    loader, run, rows = load(EVALS / "bad_lines.jsonl")
    assert [r.sample_id for r in rows] == ["arith.dev.0", "arith.dev.1", "arith.dev.2", "arith.dev.3"]
    by_code = {w.code: w for w in run.warnings}
    assert by_code["lines_skipped"].message == "2 lines skipped (first at line 4, 8)"
    assert by_code["missing_field"].line == 7
    assert by_code["bad_encoding"].line == 11
    assert "telemetry" in by_code["unknown_event_type"].message
    assert all(w.file and w.file.endswith("bad_lines.jsonl") for w in run.warnings if w.line)
    transcript = loader.load_transcript(run.run_id, "arith.dev.3")
    assert "caf\ufffd?" in transcript.messages[0].text
    assert query.summarize(run, rows)["score_mean"] == pytest.approx(2 / 3)


def test_several_matches_flagged_and_nan_report_is_not_a_number():
    _, run, rows = load(EVALS / "several_matches_nan.jsonl")
    assert rows[0].flags == ("several_matches",) and rows[0].correct is False  # the last match wins
    assert run.aggregates == {"match_events": 3, "match_correct": 2}
    assert math.isnan(run.reported_metrics["accuracy"])
    assert query.reported_headline(run) == {}


def test_no_spec_line_falls_back_to_event_run_id():
    _, run, rows = load(EVALS / "no_spec.jsonl")
    assert run.run_id == "261120150000NOSPEC00"
    assert {"no_spec", "no_final_report", "event_gap"} <= set(codes(run))
    assert len(rows) == 2


def test_transcript_shows_repeated_prompts_once():
    loader, run, _ = load(EVALS / "report_on_line2.jsonl")
    transcript = loader.load_transcript(run.run_id, "arith.dev.10")
    kinds = [type(i).__name__ for i in transcript.items]
    assert kinds[:3] == ["Message", "Message", "ModelCall"]
    assert isinstance(transcript.items[3], Message) and transcript.items[3].role == "assistant"
