"""synth results file, text report and the rows joined with traces."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from loaders.formats.synth_results import (
    REPORT_LABEL,
    avg_row,
    build_rows,
    fmt_cell,
    format_avg_row,
    format_eval_table,
    parse_report,
    parse_results_json,
    rows_from,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "synth"


def results() -> list[dict]:
    return parse_results_json((FIX / "eval_results.json").read_bytes(), "eval_results.json").rows


def test_fmt_cell_rules() -> None:
    assert [fmt_cell(v) for v in (1.0, 0.000123, 30012.0, 0.0, 11285.909366666667, None, 405, "x")] == [
        "1", "0.0001", "30012", "0", "11285.9094", "-", "405", "x"]


def test_table_is_byte_identical_to_the_cli() -> None:
    expected = (FIX / "stdout_table.txt").read_text()
    assert format_eval_table(results()) + "\n" == expected


def test_avg_row_matches_stdout_table() -> None:
    avg_line = next(line for line in (FIX / "stdout_table.txt").read_text().splitlines() if line.startswith("avg "))
    cells = [c.strip() for c in avg_line.rstrip().split(" | ")]
    printed = format_avg_row(results())
    assert list(printed.values()) == cells[1:-1] == ["0.5", "0.5", "0.5", "-", "11285.9094", "0.25", "405", "0.0001"]
    avg = avg_row(results())
    assert avg["score"] == 0.5 and avg["tokens"] == 405 and avg["events"] is None
    assert avg["cost_usd"] == pytest.approx(0.0001165)


def test_results_file_parsed() -> None:
    parsed = parse_results_json((FIX / "eval_results.json").read_bytes(), "f")
    assert parsed.config["policy_config"] == {"model": "gpt-4o-mini", "provider": "openai"}
    assert [r["seed"] for r in parsed.rows] == [0, 1, 2]
    assert parsed.report_label == REPORT_LABEL and parsed.reported["score"] == 0.5
    assert parsed.warnings == []


def test_results_items_wrapper_and_damage() -> None:
    parsed = parse_results_json(json.dumps({"results": {"items": [{"seed": 3, "score": 1.0}, 7]}}), "f")
    assert [r["seed"] for r in parsed.rows] == [3]
    assert parsed.warnings[0].code == "bad_row" and "results[1]" in parsed.warnings[0].message
    broken = parse_results_json(b'{"config": {', "broken.json")
    assert broken.rows == [] and broken.warnings[0].code == "bad_results" and broken.warnings[0].file == "broken.json"
    assert parse_results_json(b'{"results": 5}', "f").warnings[0].message == "`results` is not a list: no rows"


def test_report_parsed_with_rounding_warning() -> None:
    report = parse_report((FIX / "eval_report.txt").read_text(), "eval_report.txt")
    assert report.config["app_id"] == "banking77" and report.config["seeds"] == [0, 1, 2]
    assert [r["seed"] for r in report.rows] == [0, 1, 2]
    assert report.rows[0]["cost_usd"] == 0.0001  # 4 decimals only
    assert report.rows[0]["tokens"] == 412 and report.rows[2]["error"] == "ReadTimeout: timed out"
    assert report.rows[2]["score"] is None
    assert report.reported == {"score": 0.5, "reward_mean": 0.5, "outcome": 0.5, "events": None, "latency_ms": 11285.9094,
                               "verifier": 0.25, "tokens": 405, "cost_usd": 0.0001}
    assert report.warnings[0].code == "rounded_values" and "4 decimals" in report.warnings[0].message


def test_report_error_text_with_pipes_kept() -> None:
    rows = [{"seed": 0, "score": None, "latency_ms": 5.0, "error": "HTTP 500 | upstream | down"}]
    report = parse_report(format_eval_table(rows), "t")
    assert report.rows[0]["error"] == "HTTP 500 | upstream | down"
    assert report.rows[0]["latency_ms"] == 5.0


def test_rows_from_results_alone() -> None:
    rows = rows_from("run", results(), {})
    assert [(r.sample_id, r.score, r.tokens_total, r.cost_usd, r.error_kind) for r in rows] == [
        ("0", 1.0, 412, 0.000123, None), ("1", 0.0, 398, 0.00011, None), ("2", None, None, None, "ReadTimeout")]
    assert rows[1].verifier_score == 0.25 and rows[2].finish_reason == "error"
    assert not any(r.has_transcript or r.tokens_computed for r in rows)
    assert rows[0].attribution == "seed" and rows[0].metrics["score_key"] == "score"


def test_tokens_computed_when_results_lack_them() -> None:
    trace = json.loads((FIX / "traces/full/seed_0_trace.json").read_text())
    result = [{"seed": 0, "score": 1.0, "outcome_score": 1.0, "tokens": None, "cost_usd": None}]
    built = build_rows("run", result, {0: trace})
    row = built.rows[0]
    assert (row.tokens_in, row.tokens_out, row.tokens_total, row.tokens_computed) == (312, 18, 330, True)
    assert row.cost_usd == pytest.approx(5.76e-05) and row.metrics["cost_computed"] is True
    assert row.correct is True and row.n_messages == 3 and row.has_transcript
    assert row.metrics["sum of step rewards"] == 1.0
    codes = {w.code: w.message for w in built.warnings}
    assert "seed(s) 0" in codes["tokens_computed"] and "seed(s) 0" in codes["cost_computed"]


def test_results_figures_kept_when_trace_differs() -> None:
    trace = json.loads((FIX / "traces/full/seed_0_trace.json").read_text())
    built = build_rows("run", results(), {0: trace})
    row = built.rows[0]
    assert row.tokens_total == 412 and not row.tokens_computed and row.tokens_in is None
    assert row.metrics["trace_tokens_total"] == 330 and row.cost_usd == 0.000123
    differ = [w.message for w in built.warnings if w.code == "figures_differ"]
    assert differ == ["seed 0: the results say 412 tokens, the trace's LM events sum to 330; the results' figure is kept",
                      "seed 0: the results say cost $0.000123, the trace's LM events sum to $5.76e-05; the results' figure is kept"]


def test_nan_and_possibly_misreported() -> None:
    parsed = parse_results_json((FIX / "nan_results/eval_results.json").read_bytes(), "nan.json")
    assert math.isnan(parsed.rows[0]["score"])  # json.loads accepts NaN
    assert math.isnan(parsed.reported["score"])  # the CLI's own avg row includes it, as upstream does
    built = build_rows("run", parsed.rows, {}, origin="nan.json")
    nan_row, ok_row, zero_row = built.rows
    assert nan_row.score is None and nan_row.reward_mean is None and "nan_value" in nan_row.flags
    assert ok_row.score == 1.0 and ok_row.flags == ()
    assert zero_row.score == 0.0 and zero_row.flags == ("possibly_misreported",)
    codes = [w.code for w in built.warnings]
    assert codes.count("nan_value") == 2 and "possibly_misreported" in codes
    assert next(w for w in built.warnings if w.code == "possibly_misreported").message.startswith("seed(s) 2: score 0")


def test_later_spelling_score_key_and_unknown_seed() -> None:
    rows = rows_from("run", [{"seed": 4, "outcome_reward": 0.75, "trace_id": "t1"}, {"score": 1.0}], {})
    assert (rows[0].sample_id, rows[0].score, rows[0].metrics["score_key"], rows[0].metrics["trace_id"]) == ("4", 0.75,
                                                                                                          "outcome_reward", "t1")
    assert rows[1].sample_id == "seed-unknown"


def test_traces_without_results() -> None:
    full = json.loads((FIX / "traces/full/seed_0_trace.json").read_text())
    compact = json.loads((FIX / "traces/compact/seed_0_trace.json").read_text())
    built = build_rows("run", None, {0: full, 1: compact})
    r0, r1 = built.rows
    assert (r0.score, r0.reward_mean, r0.flags, r0.tokens_total, r0.tokens_computed) == (1.0, 1.0, ("outcome_unavailable",), 330, True)
    assert (r1.score, r1.tokens_total) == (None, 330)
    codes = {w.code: w.message for w in built.warnings}
    assert "outcome scores are not available" in codes["no_results"]
    assert codes["no_rewards"] == "seed(s) 1: the trace holds no environment reward, so no score"


def test_seed_sets_disagree() -> None:
    full = json.loads((FIX / "traces/full/seed_0_trace.json").read_text())
    built = build_rows("run", results(), {0: full, 5: full})
    assert [r.sample_id for r in built.rows] == ["0", "1", "2", "5"]
    assert built.rows[3].flags == ("no_result_row",) and built.rows[3].score == 1.0
    mismatch = next(w for w in built.warnings if w.code == "seed_mismatch")
    assert mismatch.message == ("results (3 seeds) and traces (2 seeds) disagree on the seed set; all are counted: only in the "
                                "results: 1, 2 (failed, so no trace expected: 2); only in the traces: 5")
