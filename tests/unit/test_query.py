"""loaders.query: run figures, run statistics, the per-seed table and its filters."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from loaders import query, stats
from loaders.schema import SampleRow
from tests.unit.builders import binary_rows, row, run

# ---------------------------------------------------------------- run_statistics


def test_run_statistics_headline_matches_scipy_and_separates_system_errors() -> None:
    rows = binary_rows([True] * 6 + [False] * 3)
    rows.append(row("s.9", error="sandbox died", error_kind="system_error"))
    rows.append(row("s.10", score=0.0, correct=False, error="ValueError: bad", error_kind="ValueError",
                    finish_reason="error"))
    st = query.run_statistics(run(), rows)
    ref = sps.binomtest(6, 10).proportion_ci(method="wilson")
    h = st["headline"]
    assert (h["estimate"], h["n"], h["method"]) == (0.6, 10, stats.WILSON)
    assert (h["low"], h["high"]) == pytest.approx((ref.low, ref.high))
    incl = st["error_inclusive"]
    assert (incl["estimate"], incl["n"]) == (pytest.approx(6 / 11), 11)
    assert "excluded" in st["error_aware"]["label"] and "failures" in incl["label"]
    assert (st["n_samples"], st["n_attempts"], st["n_system_errors"], st["n_errors"]) == (11, 11, 1, 2)
    assert st["binary"] is True
    assert st["pass_at_k"] == [] and st["flaky"] is None
    kinds = {e["error_kind"]: e for e in st["errors"]}
    assert kinds["system_error"]["example"] == "sandbox died" and kinds["system_error"]["system_error"]
    assert kinds["ValueError"]["count"] == 1 and not kinds["ValueError"]["system_error"]
    assert {f["finish_reason"]: f["count"] for f in st["finish_reasons"]} == {"error": 1, "unknown": 10}
    json.dumps(st)  # JSON-able as is


def test_run_statistics_continuous_uses_t_interval() -> None:
    values = [0.2, 0.4, 0.9, 0.65]
    st = query.run_statistics(run(), [row(str(i), score=v) for i, v in enumerate(values)])
    arr = np.array(values)
    low, high = sps.t.interval(0.95, len(arr) - 1, loc=arr.mean(), scale=sps.sem(arr))
    assert st["binary"] is False and st["headline"]["method"] == stats.T_INTERVAL
    assert (st["headline"]["low"], st["headline"]["high"]) == pytest.approx((low, high))


def test_run_statistics_attempts_give_pass_at_k_and_flaky_share() -> None:
    rows = [row("a", i, correct=c) for i, c in enumerate([True, False, True])]
    rows += [row("b", i, correct=c) for i, c in enumerate([False, False, False])]
    st = query.run_statistics(run(), rows)
    assert st["max_attempts"] == 3
    assert [t["k"] for t in st["pass_at_k"]] == [1, 2, 3]
    assert st["pass_at_k"][0]["pass_at_k"] == pytest.approx((2 / 3 + 0) / 2)
    assert st["flaky"]["share"] == 0.5 and st["flaky"]["sample_ids"] == ["a"]


def test_run_statistics_usage_unknown_is_none_never_zero() -> None:
    rows = [row("a", correct=True, latency_ms=100.0, tokens_total=10), row("b", correct=False, latency_ms=300.0)]
    usage = query.run_statistics(run(), rows)["usage"]
    assert usage["cost_usd"] == {"total": None, "mean": None, "p50": None, "p95": None, "n_known": 0, "n_missing": 2}
    assert usage["latency_ms"]["total"] == 400.0 and usage["latency_ms"]["p50"] == 200.0
    assert usage["tokens_total"]["total"] == 10 and usage["tokens_total"]["n_missing"] == 1


def test_run_statistics_empty_run() -> None:
    st = query.run_statistics(run(), [])
    assert st["headline"]["estimate"] is None and st["n_samples"] == 0 and st["reported"]["available"] is False


def test_reported_match_and_mismatch_reasons() -> None:
    rows = binary_rows([True, True, False, False])
    same = query.run_statistics(run(reported_metrics={"accuracy": 0.5}, report_label="final_report"), rows)["reported"]
    assert same["mismatch"] is False and same["value"] == 0.5 and same["reason"] is None
    # evals averages over match events: 5 events (one sample matched twice) with 3 correct
    flagged = [*rows[:3], rows[3].model_copy(update={"flags": ("several_matches",)})]
    evals_run = run(reported_metrics={"accuracy": 0.6}, report_label="final_report",
                    aggregates={"match_events": 5, "match_correct": 3})
    rep = query.run_statistics(evals_run, flagged)["reported"]
    assert rep["mismatch"] is True and rep["difference"] == pytest.approx(-0.1)
    assert "match events" in rep["reason"] and "equals the report" in rep["reason"] and "several match" in rep["reason"]
    partial = query.run_statistics(run(reported_metrics={"accuracy": 0.25}, report_label="partial final_report",
                                       status="incomplete"), rows)["reported"]
    assert partial["mismatch"] is True and "partial" in partial["reason"] and "incomplete" in partial["reason"]


def test_reported_figure_rounded_for_print_is_not_a_mismatch() -> None:
    rows = binary_rows([True, True, False])
    rep = query.run_statistics(run(reported_metrics={"score": 0.6667}, report_label="avg row"), rows)["reported"]
    assert rep["mismatch"] is False and rep["reason"] == "upstream rounds to 4 decimals"
    off = query.run_statistics(run(reported_metrics={"score": 0.6668}), rows)["reported"]
    assert off["mismatch"] is True
    short = query.run_statistics(run(reported_metrics={"score": 0.67}), rows)["reported"]
    assert short["mismatch"] is True  # two places could be an exact value: no rounding assumed


def test_reported_mismatch_explained_by_error_inclusive_figure() -> None:
    rows = [*binary_rows([True, True, False]), row("s.3", error="down", error_kind="system_error")]
    rep = query.run_statistics(run(reported_metrics={"accuracy": 0.5}), rows)["reported"]
    assert rep["mismatch"] is True and "error-inclusive" in rep["reason"]


def test_aggregate_only_run_uses_match_counts() -> None:
    agg = run(attribution="aggregate_only", has_sample_ids=False, aggregates={"match_events": 10, "match_correct": 7})
    h = query.run_statistics(agg, [])["headline"]
    assert h["estimate"] == 0.7 and h["from_aggregates"] and h["method"] == stats.WILSON


def test_existing_summarize_unchanged() -> None:
    s = query.summarize(run(), binary_rows([True, False]))
    assert s["score_mean"] == 0.5 and s["n_samples"] == 2 and s["tokens_total"] is None


# ---------------------------------------------------------------- seed table and filters


def _mixed_rows() -> list[SampleRow]:
    return [
        row("t.1", 0, correct=True, grader_log="exact match"), row("t.1", 1, correct=True),
        row("t.2", 0, correct=True), row("t.2", 1, correct=False, grader_log="Wrong [unit]"),
        row("t.3", 0, correct=False), row("t.3", 1, correct=False),
        row("t.10", 0, score=0.5), row("t.10", 1, error="Timeout after 30s", error_kind="system_error"),
    ]


def test_seed_table_rows_and_status_columns() -> None:
    frame = query.seed_table(_mixed_rows())
    assert len(frame) == 8
    assert list(frame["sample_id"].unique()) == ["t.1", "t.2", "t.3", "t.10"]  # numeric order
    assert frame.loc[frame["sample_id"] == "t.2", "flaky"].all()
    assert not frame.loc[frame["sample_id"] == "t.10", "flaky"].any()  # one graded attempt only
    assert frame["status"].tolist() == ["passed", "passed", "passed", "failed", "failed", "failed", "failed", "errored"]


def test_seed_table_grouped_aggregates_attempts() -> None:
    g = query.seed_table(_mixed_rows(), grouped=True).set_index("sample_id")
    assert g.loc["t.1", "k_of_n"] == "2/2" and g.loc["t.2", "k_of_n"] == "1/2" and g.loc["t.3", "k_of_n"] == "0/2"
    assert g.loc["t.10", "k_of_n"] == "0/1" and g.loc["t.10", "errored"]
    assert g.loc["t.2", "score"] == 0.5 and g.loc["t.2", "status"] == "flaky"
    assert g["status"].to_dict() == {"t.1": "passed", "t.2": "flaky", "t.3": "failed", "t.10": "errored"}
    assert "Wrong [unit]" in g.loc["t.2", "grader_log"]


@pytest.mark.parametrize("grouped", [False, True])
def test_filter_rows_status_score_and_search(grouped: bool) -> None:
    frame = query.seed_table(_mixed_rows(), grouped=grouped)

    def ids(**kw: Any) -> set[str]:
        return set(query.filter_rows(frame, **kw)["sample_id"])

    assert ids(status="all") == {"t.1", "t.2", "t.3", "t.10"}
    assert ids(status="errored") == {"t.10"}
    assert ids(status="flaky") == {"t.2"}
    assert ids(status="passed") == ({"t.1", "t.2"} if not grouped else {"t.1"})
    assert ids(status="failed") == ({"t.2", "t.3", "t.10"} if not grouped else {"t.3", "t.10"})
    assert ids(score_min=0.4, score_max=0.6) == ({"t.10"} if not grouped else {"t.2", "t.10"})
    assert ids(search="wrong [UNIT]") == {"t.2"}  # plain text, case-insensitive, brackets literal
    assert ids(search="timeout") == {"t.10"}  # error text
    assert ids(search="T.1") == {"t.1", "t.10"}  # sample id
    assert ids(search=r"^t\.[23]$", regex=True) == {"t.2", "t.3"}
    assert ids(status="failed", search="wrong") == ({"t.2"} if not grouped else set())


def test_filter_rows_rejects_bad_input() -> None:
    frame = query.seed_table(_mixed_rows())
    with pytest.raises(ValueError, match="status"):
        query.filter_rows(frame, status="weird")
    with pytest.raises(ValueError, match="regular expression"):
        query.filter_rows(frame, search="([", regex=True)


def test_filter_rows_100k_rows_smoke() -> None:
    n = 100_000
    rows = [SampleRow(run_id="r", sample_id=f"big.{i // 2}", attempt=i % 2, sort_key=(i // 2, f"big.{i // 2}"),
                      score=float(i % 4 == 0), correct=i % 4 == 0,
                      error="RateLimit: slow down" if i % 1000 == 1 else None, error_kind="RateLimit" if i % 1000 == 1 else None,
                      grader_log="needle here" if i % 10_000 == 0 else None) for i in range(n)]
    frame = query.seed_table(rows)
    assert len(frame) == n
    assert len(query.filter_rows(frame, "passed")) == n // 4
    assert len(query.filter_rows(frame, "errored")) == n // 1000
    # sample k holds rows 2k (passes iff k is even) and 2k + 1 (always fails): even samples are flaky
    assert len(query.filter_rows(frame, "flaky")) == n // 2
    assert len(query.filter_rows(frame, search="NEEDLE")) == n // 10_000
    # "big.4999" matches big.4999 and big.49990..49999; the passing rows are attempt 0 of the even ones
    assert len(query.filter_rows(frame, "passed", score_min=1.0, search="big.4999")) == 5
    grouped = query.seed_table(rows, grouped=True)
    assert len(grouped) == n // 2
    assert len(query.filter_rows(grouped, "failed")) == n // 4  # odd sample numbers never pass
