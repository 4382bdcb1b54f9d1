"""loaders.compare: aligning runs by sample id, paired tests and flips, transcript alignment."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as sps

from loaders import compare, stats
from loaders.schema import Message
from tests.unit.builders import binary_rows, row, run

# ---------------------------------------------------------------- alignment


def test_map_sample_id_strategies() -> None:
    assert compare.map_sample_id("arc.dev.12") == "arc.dev.12"
    assert compare.map_sample_id("arc.dev.12", "numeric") == compare.map_sample_id("12", "numeric") == "12"
    assert compare.map_sample_id("seed_007", "numeric suffix") == "7"
    assert compare.map_sample_id("no-number-here", "numeric") == "no-number-here"
    assert compare.map_sample_id("X", lambda s: s.lower()) == "x"
    with pytest.raises(ValueError):
        compare.map_sample_id("a", "fuzzy")


def test_align_runs_exact_and_numeric() -> None:
    a = binary_rows([True, False, True], prefix="arc.dev.")
    b = binary_rows([True, True, False, True], prefix="", run_id="B")  # ids "0".."3"
    exact = compare.align_runs(a, b)
    assert exact.both == [] and len(exact.only_a) == 3 and len(exact.only_b) == 4
    numeric = compare.align_runs(a, b, id_map="numeric")
    assert [(x.sample_id, y.sample_id) for x, y in numeric.both] == [("arc.dev.0", "0"), ("arc.dev.1", "1"), ("arc.dev.2", "2")]
    assert numeric.only_a == [] and [r.sample_id for r in numeric.only_b] == ["3"]
    assert numeric.only_b_samples == ["3"]


def test_align_runs_reports_id_clashes_instead_of_dropping() -> None:
    a = [row("dev.1", correct=True), row("test.1", correct=False)]
    b = [row("1", correct=True, run_id="B")]
    al = compare.align_runs(a, b, id_map="numeric")
    assert len(al.both) == 1 and [r.sample_id for r in al.only_a] == ["test.1"]
    assert al.warnings and "test.1" in al.warnings[0]


def test_align_runs_by_attempt() -> None:
    a = [row("x", 0, correct=True), row("x", 1, correct=True)]
    b = [row("x", 0, correct=True, run_id="B")]
    al = compare.align_runs(a, b)
    assert len(al.both) == 1 and [(r.sample_id, r.attempt) for r in al.only_a] == [("x", 1)]
    assert al.only_a_samples == []  # the sample is in both; only an attempt is unmatched


# ---------------------------------------------------------------- compare_runs


def test_compare_binary_uses_exact_mcnemar_and_lists_unshared_samples() -> None:
    a_pass = [True] * 12 + [False] * 4 + [True] * 2 + [False] * 2
    b_pass = [False] * 9 + [True] * 3 + [True] * 4 + [True] * 2 + [False] * 2
    rows_a = [*binary_rows(a_pass), row("only.a", correct=True)]
    rows_b = [*binary_rows(b_pass, run_id="B"), row("only.b", correct=False, run_id="B"), row("only.b2", correct=True, run_id="B")]
    c = compare.compare_runs(run("A"), rows_a, run("B"), rows_b)
    assert (c["n_both"], c["only_a"], c["only_b"]) == (20, ["only.a"], ["only.b", "only.b2"])
    assert c["sets_differ"] and any("different samples" in w for w in c["warnings"])
    assert (c["regressed"], c["improved"], c["unchanged"]) == (9, 4, 7)
    assert c["test"] == stats.MCNEMAR and c["binary"] and c["unit"] == "attempt"
    assert c["p_value"] == pytest.approx(sps.binomtest(9, 13, 0.5).pvalue)
    assert c["delta"] == pytest.approx((sum(b_pass) - sum(a_pass)) / 20)
    ref = stats.paired_proportion_diff_ci(both=5, only_b=4, only_a=9, neither=2)
    assert c["delta_ci"] == [ref.low, ref.high] and "Newcombe" in c["delta_ci_method"]
    assert c["significant"] is False and c["regression"] is False
    assert {f["change"] for f in c["flips"]} == {"improved", "regressed", "unchanged"}
    assert c["flips"][0] == {"sample_id": "s.0", "sample_id_b": "s.0", "attempt": 0, "score_a": 1.0, "score_b": 0.0,
                             "change": "regressed"}
    assert c["run_a"]["headline"]["n"] == 21 and c["run_b"]["headline"]["n"] == 22
    json.dumps(c)  # the CLI's --json, no default= needed


def test_compare_flags_significant_regression_and_improvement() -> None:
    good, bad = [True] * 30, [True] * 20 + [False] * 10
    worse = compare.compare_runs(run("A"), binary_rows(good), run("B"), binary_rows(bad, run_id="B"))
    assert worse["p_value"] == pytest.approx(sps.binomtest(10, 10, 0.5).pvalue)
    assert worse["significant"] and worse["regression"] and not worse["improvement"]
    assert worse["delta_ci"][1] < 0
    better = compare.compare_runs(run("B"), binary_rows(bad, run_id="B"), run("A"), binary_rows(good))
    assert better["significant"] and better["improvement"] and not better["regression"]
    strict = compare.compare_runs(run("A"), binary_rows(good), run("B"), binary_rows(bad, run_id="B"), alpha=0.001)
    assert strict["p_value"] > 0.001 and not strict["regression"] and strict["confidence"] == 0.999


def test_compare_continuous_uses_wilcoxon_and_paired_bootstrap() -> None:
    a = [0.1, 0.4, 0.5, 0.3, 0.9, 0.2, 0.6, 0.45]
    b = [0.3, 0.35, 0.8, 0.5, 0.95, 0.1, 0.9, 0.7]
    c = compare.compare_runs(run("A"), [row(f"s.{i}", score=v) for i, v in enumerate(a)],
                           run("B"), [row(f"s.{i}", score=v, run_id="B") for i, v in enumerate(b)])
    assert c["test"] == stats.WILCOXON and not c["binary"]
    assert c["p_value"] == pytest.approx(sps.wilcoxon(b, a).pvalue)
    ci = stats.paired_bootstrap_ci(a, b)
    assert c["delta_ci"] == [ci.low, ci.high] and c["delta_ci_method"] == stats.PAIRED_BOOTSTRAP
    assert c["delta"] == pytest.approx(np.mean(b) - np.mean(a))
    assert (c["improved"], c["regressed"], c["unchanged"]) == (6, 2, 0)


def test_compare_excludes_system_errors_and_reports_them() -> None:
    rows_a = binary_rows([True, True, False])
    rows_b = [row("s.0", correct=True, run_id="B"), row("s.1", error="infra", error_kind="system_error", run_id="B"),
              row("s.2", correct=True, run_id="B")]
    c = compare.compare_runs(run("A"), rows_a, run("B"), rows_b)
    assert c["n_excluded"] == 1 and c["n_used"] == 2 and c["flips"][1]["change"] == "excluded"
    as_fail = compare.compare_runs(run("A"), rows_a, run("B"), rows_b, errors="as_fail")
    assert as_fail["n_used"] == 3 and as_fail["regressed"] == 1


def test_compare_identical_and_empty_runs() -> None:
    rows = binary_rows([True, False, True])
    same = compare.compare_runs(run("A"), rows, run("B"), [r.model_copy(update={"run_id": "B"}) for r in rows])
    assert same["p_value"] == 1.0 and same["delta"] == 0.0 and not same["significant"] and same["unchanged"] == 3
    empty = compare.compare_runs(run("A"), [], run("B"), [])
    assert empty["n_both"] == 0 and empty["delta"] is None and empty["regression"] is False
    json.dumps(empty)


def test_compare_numeric_id_map() -> None:
    rows_a = binary_rows([True, False], prefix="arc.dev.")
    rows_b = binary_rows([True, True], prefix="", run_id="B")
    assert compare.compare_runs(run("A"), rows_a, run("B"), rows_b)["n_both"] == 0
    c = compare.compare_runs(run("A"), rows_a, run("B"), rows_b, id_map="numeric")
    assert c["n_both"] == 2 and c["improved"] == 1 and c["id_map"] == "numeric"
    assert c["flips"][1]["sample_id"] == "arc.dev.1" and c["flips"][1]["sample_id_b"] == "1"


def test_compare_usage_deltas() -> None:
    rows_a = [row("a", correct=True, tokens_total=100, cost_usd=0.01), row("b", correct=True, tokens_total=50)]
    rows_b = [row("a", correct=True, tokens_total=80, cost_usd=0.02, run_id="B"), row("b", correct=True, run_id="B")]
    u = compare.compare_runs(run("A"), rows_a, run("B"), rows_b)["usage"]
    assert u["tokens_total"] == {"total_a": 100.0, "total_b": 80.0, "delta": -20.0, "mean_a": 100.0, "mean_b": 80.0, "n": 1}
    assert u["cost_usd"]["delta"] == pytest.approx(0.01)
    assert u["latency_ms"]["delta"] is None and u["latency_ms"]["n"] == 0


def test_compare_with_attempts_reports_k_of_n_and_flakiness() -> None:
    rows_a = [row("s.1", i, correct=c) for i, c in enumerate([True, True, True])]
    rows_a += [row("s.2", i, correct=c) for i, c in enumerate([True, False, True])]
    rows_a += [row("s.3", i, correct=c) for i, c in enumerate([False, False, False])]
    rows_b = [row("s.1", i, correct=c, run_id="B") for i, c in enumerate([True, False, True])]
    rows_b += [row("s.2", i, correct=c, run_id="B") for i, c in enumerate([True, True, True])]
    rows_b += [row("s.3", i, correct=c, run_id="B") for i, c in enumerate([False, False, False])]
    c = compare.compare_runs(run("A"), rows_a, run("B"), rows_b)
    assert c["unit"] == "sample" and c["n_used"] == 3 and c["n_pairs"] == 9
    assert c["became_flaky"] == ["s.1"] and c["stopped_being_flaky"] == ["s.2"]
    seeds = {s["sample_id"]: s for s in c["seeds"]}
    assert (seeds["s.1"]["k_a"], seeds["s.1"]["n_a"], seeds["s.1"]["k_b"], seeds["s.1"]["n_b"]) == (3, 3, 2, 3)
    assert c["test"] == stats.WILCOXON  # per-sample pass rates are not 0/1
    assert c["delta"] == pytest.approx(0.0)


def test_compare_many_against_baseline_with_bh_adjustment() -> None:
    base = binary_rows([True] * 20)
    worse = binary_rows([True] * 10 + [False] * 10, run_id="B")
    same = binary_rows([True] * 20, run_id="C")
    out = compare.compare_many([(run("A"), base), (run("B"), worse), (run("C"), same)], baseline="A")
    assert out["baseline"] == "A" and [h["run_id"] for h in out["headlines"]] == ["A", "B", "C"]
    assert [c["run_b"]["run_id"] for c in out["comparisons"]] == ["B", "C"]
    ref = sps.false_discovery_control([out["comparisons"][0]["p_value"], 1.0])
    assert [c["p_value_adjusted"] for c in out["comparisons"]] == pytest.approx(ref.tolist())
    assert out["comparisons"][0]["regression"]
    with pytest.raises(ValueError):
        compare.compare_many([(run("A"), base)], baseline="Z")
    assert compare.compare_many([])["comparisons"] == []


# ---------------------------------------------------------------- transcripts


def test_transcript_alignment_marks_first_divergence() -> None:
    a = [Message(role="system", text="Be brief."), Message(role="user", text="2+2?"), Message(role="assistant", text="4")]
    b = [Message(role="system", text="Be brief."), Message(role="user", text="2+2?"), Message(role="assistant", text="5"),
         Message(role="user", text="sure?")]
    out = compare.transcript_alignment(a, b)
    assert out["first_divergence"] == 2 and len(out["pairs"]) == 4
    assert [p["same"] for p in out["pairs"]] == [True, True, False, False]
    assert out["pairs"][3]["a"] is None and out["pairs"][3]["b"].text == "sure?"
    assert compare.transcript_alignment(a, list(a))["first_divergence"] is None
    assert compare.transcript_alignment(a, a[:2])["first_divergence"] == 2
    assert compare.transcript_alignment([], [])["first_divergence"] is None
    role_only = compare.transcript_alignment([{"role": "user", "text": "hi"}], [{"role": "assistant", "text": "hi"}])
    assert role_only["first_divergence"] == 0
