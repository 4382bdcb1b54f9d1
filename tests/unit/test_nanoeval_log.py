"""nanoeval JsonRecorder logs: the generated examples and one hand-built fixture per quirk (spec B, C.2)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from loaders import query, resolve
from loaders.base import Loader
from loaders.formats import nanoeval_log
from loaders.schema import GenericEvent, GradeCheckpoint, Message, ModelCall, Run, SampleRow
from tests.conftest import EXAMPLES, FIXTURES

NANO = FIXTURES / "nanoeval"
RECORDER = EXAMPLES / "recorder"
INFERRED = "grouping inferred from record order"


def load(path: Path, n_runs: int = 1) -> tuple[Loader, list[Run], list[list[SampleRow]]]:
    loader = resolve(str(path))
    runs = list(loader.list_runs().runs)
    assert len(runs) == n_runs
    assert all(r.dialect == "nanoeval" for r in runs)
    return loader, runs, [loader.load_samples(r.run_id) for r in runs]


def load_one(path: Path) -> tuple[Loader, Run, list[SampleRow]]:
    loader, (run,), (rows,) = load(path)
    return loader, run, rows


def codes(run: Run) -> list[str]:
    return [w.code for w in run.warnings]


def n_records(path: Path) -> int:
    """Lines that parse as JSON objects: every one must reach a run, a row, a transcript or an aggregate."""
    count = 0
    for raw in path.read_bytes().splitlines():
        with contextlib.suppress(ValueError):
            count += isinstance(json.loads(raw), dict)
    return count


def transcript_records(loader: Loader, run: Run, rows: list[SampleRow]) -> int:
    return sum(len(loader.load_transcript(run.run_id, r.sample_id, r.attempt).raw) for r in rows)


# --- the generated examples ----------------------------------------------------------------------------------------


def test_mcq_example_is_safely_grouped():
    loader, run, rows = load_one(RECORDER / "nanoeval_generated_mcq.jsonl")
    assert (run.run_id, run.config["run_set_id"]) == ("261122131233Q2FC25EX", "2611221312333XNBCZ5A")
    assert run.created_at is not None and run.created_at.isoformat() == "2026-11-22T13:12:33.323957+00:00"
    assert (run.status, run.report_label, run.attribution, run.has_sample_ids) == ("completed", "final_report", "inferred", False)
    assert run.eval_name is None and run.model is None
    assert run.display_name == "nanoeval_generated_mcq · 261122131233Q2FC25EX"
    assert run.reported_metrics == {"accuracy": 0.5, "is_valid": True, "num_tasks": 2,
                                    "metrics_including_errors": {"accuracy": 0.5, "num_tasks": 2}}
    assert codes(run) == ["ids_inferred"]
    assert [(r.sample_id, r.attempt, r.score, r.correct) for r in rows] == [
        ("#1", 0, 0.0, False), ("#2", 0, 1.0, True), ("#3", 0, 0.0, False), ("#4", 0, 1.0, True)]
    assert all(r.attribution == "inferred" and INFERRED in r.flags and r.correct_rule == "match.correct" for r in rows)
    assert all(r.tokens_total is None for r in rows)
    summary = query.summarize(run, rows)
    assert summary["score_mean"] == run.reported_metrics["accuracy"] == 0.5
    assert summary["reported"] == {"metric": "accuracy", "value": 0.5, "label": "final_report"}
    t = loader.load_transcript(run.run_id, "#1", 0)
    assert [i.type for i in t.items if isinstance(i, GenericEvent)] == ["match", "sample_completed"]
    assert t.grade.correct is False and t.grade.score == 0.0
    assert transcript_records(loader, run, rows) == n_records(RECORDER / "nanoeval_generated_mcq.jsonl") - 2


def test_no_retry_example_is_aggregate_only():
    _, run, rows = load_one(RECORDER / "nanoeval_generated_agent_full_no-retry.jsonl")
    assert rows == []
    assert (run.run_id, run.attribution, run.has_sample_ids, run.status) == ("261122131250B22YTKVZ", "aggregate_only", False, "completed")
    assert run.aggregates == {"match_events": 4, "match_correct": 2, "n_error_records": 2,
                              "errors_by_text": {"simulated infra failure": 2}, "n_sample_completed": 4}
    assert codes(run) == ["grouping_rejected", "no_sample_ids"]
    (no_ids,) = [w for w in run.warnings if w.code == "no_sample_ids"]
    assert no_ids.message == ("This nanoeval log has no sample IDs and its records interleave; "
                              "per-sample results cannot be reconstructed.")
    assert "the error segment ending at line 13 holds a match or FinalResult" in run.warnings[0].message
    assert "the report counts 2 system error(s)" in run.warnings[0].message
    summary = query.summarize(run, rows)
    assert summary["score_mean"] == run.reported_metrics["accuracy"] == 0.5
    assert summary["score_mean_including_errors"] == pytest.approx(run.reported_metrics["metrics_including_errors"]["accuracy"])
    assert summary["n_errors"] == 2 and summary["n_attempts"] == 0


def test_with_retry_example_uses_log_at_end_pairs():
    loader, run, rows = load_one(RECORDER / "nanoeval_generated_agent_full_with-retry.jsonl")
    assert (run.run_id, run.attribution, run.has_sample_ids) == ("261122131239KG63KQIS", "log_at_end", False)
    assert codes(run) == ["retried_errors", "ids_from_log_at_end"]
    assert run.warnings[0].message.startswith("2 error record(s) are earlier tries that were retried")
    assert [(r.sample_id, r.attempt, r.correct, r.score, r.grader_log) for r in rows] == [
        ("q_bad", 0, False, 0.0, "score=0.0"), ("q_bad", 1, False, 0.0, "score=0.0"),
        ("q_err", 0, False, 0.0, "score=0.0"), ("q_err", 1, False, 0.0, "score=0.0"),
        ("q_ok", 0, True, 1.0, "score=1.0"), ("q_ok", 1, True, 1.0, "score=1.0")]
    assert all(r.correct_rule == "non-zero score counts as correct" and r.error is None for r in rows)
    summary = query.summarize(run, rows)
    assert summary["score_mean"] == pytest.approx(run.reported_metrics["accuracy"]) == pytest.approx(1 / 3)
    assert summary["score_mean_including_errors"] == pytest.approx(run.reported_metrics["metrics_including_errors"]["accuracy"])
    assert summary["n_attempts"] == run.reported_metrics["aggregations"]["num_attempts"] == 6
    t = loader.load_transcript(run.run_id, "q_err", 1)
    assert [i.type for i in t.items if isinstance(i, GenericEvent)] == ["log_at_end", "match"]
    assert (t.grade.correct, t.grade.grader_log) == (False, "score=0.0")
    assert run.aggregates["n_error_records"] == 2


def test_one_line_per_kind_excerpt_explains_its_mismatch():
    _, run, rows = load_one(NANO / "generated_one-line-per-kind.jsonl")
    assert rows == [] and run.attribution == "aggregate_only"
    assert codes(run) == ["grouping_rejected", "no_sample_ids", "report_mismatch"]
    assert "1 sample_completed segment(s) but the report counts 4 graded attempts" in run.warnings[0].message
    assert run.warnings[2].message == (
        "our mean score (1.0000, from 1 null-group match record(s)) differs from the report's accuracy (0.5000); "
        "the report counts 4 graded attempt(s) against our 1 null-group match record(s) (lines missing, or an excerpt?)")
    assert query.summarize(run, rows)["score_mean"] == 1.0


# --- one fixture per quirk -----------------------------------------------------------------------------------------


def test_ids_on_every_record_group_by_ids_and_last_try_counts():
    loader, run, rows = load_one(NANO / "ids_everywhere.jsonl")
    assert (run.attribution, run.has_sample_ids, run.warnings) == ("ids", True, ())
    assert [(r.sample_id, r.attempt, r.score, r.correct, r.finish_reason, r.error, r.n_messages) for r in rows] == [
        ("q_1", 0, 1.0, True, "model_ended", None, 4), ("q_1", 1, 0.0, False, "max_steps", None, 4),
        ("q_2", 0, 1.0, True, "model_ended", None, 4)]
    assert rows[1].flags == ("retried_after_error",) and rows[1].metrics["retried_errors"] == ["sandbox lost"]
    assert rows[0].correct_rule == "FinalResult grade.score == 1"
    assert query.summarize(run, rows)["score_mean"] == pytest.approx(run.reported_metrics["accuracy"])
    t = loader.load_transcript(run.run_id, "q_1", 0)
    (checkpoint,) = [i for i in t.items if isinstance(i, GradeCheckpoint)]
    assert (checkpoint.score, checkpoint.correct, checkpoint.elapsed_s) == (0.0, False, 12.5)
    assert [(m.role, m.text) for m in t.messages] == [("user", "Fix the bug"), ("assistant", "ls"), ("tool", "main.py"),
                                                      ("assistant", "Done.")]
    assert t.messages[1].tool_calls[0].name == "container.exec"
    retried = loader.load_transcript(run.run_id, "q_1", 1)
    assert (retried.grade.error, retried.grade.finish_reason, retried.grade.max_steps_reached) == (None, "max_steps", True)
    assert transcript_records(loader, run, rows) == n_records(NANO / "ids_everywhere.jsonl") - 2


def test_several_runs_in_one_file():
    loader, runs, rows = load(NANO / "append_two_runs.jsonl", n_runs=2)
    assert [r.run_id for r in runs] == ["261123100100APPENDA1", "261123100200APPENDB2"]
    assert [r.config["n_runs_in_file"] for r in runs] == [2, 2]
    assert [[(r.sample_id, r.correct) for r in rs] for rs in rows] == [[("#1", True), ("#2", False)], [("#1", False)]]
    assert [query.summarize(r, rs)["score_mean"] for r, rs in zip(runs, rows, strict=True)] == [0.5, 0.0]
    assert [r.reported_metrics["accuracy"] for r in runs] == [0.5, 0.0]
    t = loader.load_transcript(runs[1].run_id, "#1", 0)
    assert t.raw[0]["picked"] == 2


def test_partial_reports_only():
    _, run, rows = load_one(NANO / "partial_reports_only.jsonl")
    assert (run.status, run.report_label) == ("incomplete", "partial final_report")
    assert run.reported_metrics == {"accuracy": 0.5, "is_valid": True, "num_tasks": 2, "partial": True}
    assert codes(run) == ["partial_report", "ids_inferred"]
    assert run.warnings[0].line == 7
    assert [(r.sample_id, r.score, r.error, r.error_kind) for r in rows] == [
        ("#1", 1.0, None, None), ("#2", 0.0, None, None), ("#3", None, "KeyError('choices')", "system_error")]
    summary = query.summarize(run, rows)
    assert summary["score_mean"] == 0.5 and summary["reported"]["label"] == "partial final_report"
    assert summary["score_mean_including_errors"] == pytest.approx(1 / 3)


def test_records_before_run_started_form_a_synthetic_run():
    loader, runs, rows = load(NANO / "before_run_started.jsonl", n_runs=2)
    pre, main = runs
    assert pre.run_id == "before_run_started:before-run_started"
    assert codes(pre) == ["no_run_started", "no_final_report", "ids_inferred"]
    assert pre.warnings[0].message == ("2 record(s) before any run_started (lines 1-2): kept as a separate run "
                                       "'before_run_started:before-run_started' without run id")
    assert pre.status == "incomplete" and pre.reported_metrics == {}
    assert [(r.sample_id, r.correct) for r in rows[0]] == [("#1", True)]
    assert main.run_id == "261123100400AFTERPRE" and codes(main) == ["ids_inferred"]
    assert query.summarize(main, rows[1])["score_mean"] == main.reported_metrics["accuracy"] == 0.5
    assert sum(transcript_records(loader, r, rs) for r, rs in zip(runs, rows, strict=True)) == n_records(
        NANO / "before_run_started.jsonl") - 2


def test_schema_v0_step_and_final_result():
    loader, run, rows = load_one(NANO / "schema_v0.jsonl")
    assert codes(run) == ["ids_inferred"]
    assert [(r.sample_id, r.score, r.correct, r.grader_log, r.finish_reason, r.n_messages) for r in rows] == [
        ("#1", 1.0, True, "all tests pass", "model_ended", 2), ("#2", 0.0, False, "tests fail", "max_time", None)]
    assert rows[0].correct_rule == "FinalResult correct as written (schema v0)"
    t = loader.load_transcript(run.run_id, "#1", 0)
    (checkpoint,) = [i for i in t.items if isinstance(i, GradeCheckpoint)]
    assert (checkpoint.correct, checkpoint.grader_log, checkpoint.elapsed_s) == (False, "tests fail", 3.0)
    assert [(m.role, m.text) for m in t.messages] == [("user", "Fix it"), ("assistant", "Fixed.")]
    assert query.summarize(run, rows)["score_mean"] == run.reported_metrics["accuracy"] == 0.5


def test_final_result_exception_is_a_scored_error_not_a_system_error():
    loader, run, rows = load_one(NANO / "final_result_exception.jsonl")
    assert codes(run) == ["ids_inferred"]
    by_id = {r.sample_id: r for r in rows}
    slow = by_id["q_slow"]
    assert (slow.score, slow.correct, slow.error, slow.error_kind, slow.finish_reason) == (
        0.0, False, "TimeoutError (error-timeout)", "TimeoutError", "error")
    assert not query.is_system_error(slow)
    assert (by_id["q_fast"].score, by_id["q_fast"].grader_log) == (1.0, "score=1.0")
    summary = query.summarize(run, rows)
    assert summary["score_mean"] == summary["score_mean_including_errors"] == run.reported_metrics["accuracy"] == 0.5
    t = loader.load_transcript(run.run_id, "q_slow", 0)
    assert (t.grade.error, t.grade.finish_reason, t.grade.score) == ("TimeoutError (error-timeout)", "error", 0.0)


def test_record_pretty_sampling_is_text_messages():
    loader, run, rows = load_one(NANO / "record_pretty.jsonl")
    assert codes(run) == ["ids_inferred"]
    (row,) = rows
    assert (row.n_messages, row.correct) == (3, True)
    t = loader.load_transcript(run.run_id, "#1", 0)
    assert [m.role for m in t.messages] == ["user", "assistant", "tool"]
    assert t.messages[1].text == "Message(author=Author(role='assistant'), content=Code(text='pytest -q'))"
    assert "Recipient: container.exec" in t.messages[1].metadata["header"]


def test_mcq_api_sampling_with_usage():
    loader, run, rows = load_one(NANO / "mcq_api_usage.jsonl")
    assert codes(run) == ["ids_inferred"]
    assert run.model == "gpt-4o-mini-2024-07-18"
    assert [(r.tokens_in, r.tokens_out, r.tokens_total, r.n_messages) for r in rows] == [(52, 1, 53, 3), (48, 1, 49, 3)]
    assert query.summarize(run, rows)["tokens_total"] == 102
    t = loader.load_transcript(run.run_id, "#1", 0)
    (call,) = [i for i in t.items if isinstance(i, ModelCall)]
    assert (call.model, call.tokens_in, call.tokens_out, call.tokens_total, call.finish_reason) == (
        "gpt-4o-mini-2024-07-18", 52, 1, 53, "stop")
    assert [(m.role, m.text) for m in t.messages] == [("system", "Answer with a letter."), ("user", "Q1 ..."), ("assistant", "B")]


def test_unknown_record_type_is_kept_and_warned():
    loader, run, rows = load_one(NANO / "unknown_record_type.jsonl")
    assert codes(run) == ["unknown_record_type", "ids_inferred"]
    assert (run.warnings[0].line, run.warnings[0].message) == (3, "line 3: unknown record_type 'heartbeat', kept as a generic event")
    assert len(rows) == 2
    t = loader.load_transcript(run.run_id, "#1", 0)
    assert [i.type for i in t.items if isinstance(i, GenericEvent)] == ["match", "heartbeat", "sample_completed"]
    assert transcript_records(loader, run, rows) == n_records(NANO / "unknown_record_type.jsonl") - 2


def test_truncated_last_line():
    _, run, rows = load_one(NANO / "truncated_last_line.jsonl")
    assert codes(run) == ["lines_skipped", "skipped_line", "no_final_report", "ids_inferred"]
    assert run.warnings[1].message == "line 6 skipped: truncated last line (log still being written?)"
    assert run.warnings[2].message == "no final report (run incomplete?)"
    assert (run.status, run.report_label, run.reported_metrics) == ("incomplete", None, {})
    assert [(r.sample_id, r.correct) for r in rows] == [("#1", True), ("#2", False)]


def test_log_at_end_with_an_unpaired_match():
    loader, run, rows = load_one(NANO / "log_at_end_unpaired_match.jsonl")
    assert (run.attribution, run.has_sample_ids) == ("log_at_end", False)
    assert codes(run) == ["unpaired_match", "ids_from_log_at_end", "report_mismatch"]
    assert (run.warnings[0].line, run.warnings[0].message) == (
        11, "line 11: match with group_id '1' follows no unpaired log_at_end sampling; not attributed")
    assert "the segment ending at line 10 holds 2 log_at_end samplings" in run.warnings[1].message
    assert "any non-zero score counts as correct" in run.warnings[2].message
    assert [(r.sample_id, r.attempt, r.correct, r.score, r.grader_log) for r in rows] == [
        ("q_a", 0, True, 1.0, "score=1.0"), ("q_b", 0, True, 1.0, "score=0.5")]
    assert query.summarize(run, rows)["score_mean"] == 1.0 != run.reported_metrics["accuracy"]
    assert len(loader.load_transcript(run.run_id, "q_b", 0).raw) == 2


# --- robustness and the pure helpers -------------------------------------------------------------------------------


def test_missing_and_odd_fields_never_crash(tmp_path: Path):
    lines: list[Any] = [
        {"record_type": "run_started"},
        {"record_type": "extra", "data": "free text"},
        {"record_type": "extra", "data": {"type": "final_result_successful", "grade": None, "convo": {"messages": [1, None]}}},
        {"record_type": "sampling", "prompt": None, "sampled": None},
        {"record_type": "match"},
        {"record_type": "error"},
        {"record_type": 7},
        {"record_type": "final_report", "final_report": [1, 2]},
    ]
    path = tmp_path / "odd.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    loader, run, rows = load_one(path)
    assert run.run_id == "odd:1" and run.reported_metrics == {"value": [1, 2]}
    assert "unknown_record_type" in codes(run)
    for row in rows:
        loader.load_transcript(run.run_id, row.sample_id, row.attempt)


def test_detect_and_helpers():
    assert nanoeval_log.detect([{"timestamp": "t", "record_type": "run_started"}])
    assert not nanoeval_log.detect([{"spec": {}}, {"record_type": "x"}])
    assert nanoeval_log.extra_class({"grade": {"score": 1.0}, "finish_status": "finished-successfully"}) == "final"
    assert nanoeval_log.extra_class({"pb_result": {}, "run_id": "x"}) == "other"
    assert nanoeval_log.grade_of({"grade": {"score": 0.5}}, final=True)[:2] == (0.5, False)
    assert nanoeval_log.grade_of({"grade": None}, final=False)[:2] == (None, False)
    assert nanoeval_log.finish_reason_of({"finish_status": "error-model"}) == "error"
    msgs = nanoeval_log.convo_messages([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    assert msgs is not None and isinstance(nanoeval_log.build_transcript("r", "s", 0, [
        {"record_type": "extra", "data": {"type": "final_result_successful", "convo": msgs}}]).items[0], Message)
