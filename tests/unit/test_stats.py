"""loaders.stats against reference values: scipy on the same numbers, or published figures."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from scipy.special import comb

from loaders import stats
from loaders.schema import SampleRow


def row(sample_id: str, attempt: int = 0, score: float | None = None, correct: bool | None = None,
        error: str | None = None, error_kind: str | None = None) -> SampleRow:
    return SampleRow(run_id="r", sample_id=sample_id, attempt=attempt, score=score, correct=correct, error=error,
                     error_kind=error_kind)


# ---------------------------------------------------------------- intervals


def test_wilson_37_of_100_matches_scipy_and_published_value() -> None:
    ci = stats.proportion_ci(37, 100)
    ref = sps.binomtest(37, 100).proportion_ci(confidence_level=0.95, method="wilson")
    assert ci.estimate == pytest.approx(0.37)
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert (ci.low, ci.high) == pytest.approx((0.2818, 0.4678), abs=1e-4)  # Wilson score, z = 1.96
    assert ci.method == stats.WILSON and ci.n == 100


@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (1, 1), (5, 9)])
def test_wilson_edges_stay_inside_unit_interval(k: int, n: int) -> None:
    ci = stats.proportion_ci(k, n, confidence=0.9)
    ref = sps.binomtest(k, n).proportion_ci(confidence_level=0.9, method="wilson")
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high))
    assert 0.0 <= ci.low <= ci.estimate <= ci.high <= 1.0


def test_wilson_n_zero_is_unknown() -> None:
    ci = stats.proportion_ci(0, 0)
    assert (ci.estimate, ci.low, ci.high, ci.n) == (None, None, None, 0)


def test_mean_ci_matches_scipy_t_interval() -> None:
    values = [0.2, 0.5, 0.9, 0.4, 0.75, 0.1]
    ci = stats.mean_ci(values)
    arr = np.array(values)
    low, high = sps.t.interval(0.95, df=len(arr) - 1, loc=arr.mean(), scale=sps.sem(arr))
    assert ci.estimate == pytest.approx(arr.mean())
    assert (ci.low, ci.high) == pytest.approx((low, high))
    assert ci.method == stats.T_INTERVAL


def test_mean_ci_drops_none_and_nan_and_handles_tiny_inputs() -> None:
    assert stats.mean_ci([None, float("nan"), 1.0, 3.0]).estimate == 2.0
    assert stats.mean_ci([None, float("nan"), 1.0, 3.0]).n == 2
    empty = stats.mean_ci([])
    assert (empty.estimate, empty.low, empty.high, empty.n) == (None, None, None, 0)
    single = stats.mean_ci([0.4])
    assert (single.estimate, single.low, single.high) == (0.4, None, None)
    same = stats.mean_ci([0.5, 0.5, 0.5])
    assert (same.low, same.high) == (0.5, 0.5)


def test_bootstrap_ci_matches_scipy_with_the_same_seed_and_is_deterministic() -> None:
    values = [0.1, 0.4, 0.35, 0.8, 0.9, 0.2, 0.55, 0.6]
    ci = stats.bootstrap_ci(values, n_resamples=2000, seed=7)
    ref = sps.bootstrap((np.array(values),), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(7))
    assert (ci.low, ci.high) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    assert stats.bootstrap_ci(values) == stats.bootstrap_ci(values)
    assert ci.low < ci.estimate < ci.high
    assert stats.bootstrap_ci([1.0, 1.0]).low == 1.0
    assert stats.bootstrap_ci([]).estimate is None


def test_headline_picks_wilson_for_binary_and_t_for_continuous() -> None:
    binary = stats.headline([1, 0, 1, 1, None, float("nan")], binary=True)
    assert binary.method == stats.WILSON and binary.n == 4 and binary.estimate == 0.75
    ref = sps.binomtest(3, 4).proportion_ci(method="wilson")
    assert (binary.low, binary.high) == pytest.approx((ref.low, ref.high))
    cont = stats.headline([0.2, 0.4, 0.9], binary=False)
    assert cont.method == stats.T_INTERVAL and cont.estimate == pytest.approx(0.5)
    assert stats.headline([], binary=True).estimate is None
    all_pass = stats.headline([1, 1, 1], binary=True)
    assert all_pass.estimate == 1.0 and all_pass.high == pytest.approx(1.0) and all_pass.low < 1.0
    all_fail = stats.headline([0, 0, 0], binary=True)
    assert all_fail.estimate == 0.0 and all_fail.low == 0.0 and all_fail.high > 0.0


def test_interval_is_frozen_and_serialisable() -> None:
    ci = stats.proportion_ci(1, 2)
    with pytest.raises(AttributeError):
        ci.estimate = 0.0  # type: ignore[misc]
    assert set(ci.as_dict()) == {"estimate", "low", "high", "n", "method", "confidence"}


def test_percentiles() -> None:
    values = [10, 20, 30, 40, 50, None]
    assert stats.percentiles(values) == {"p50": 30.0, "p95": pytest.approx(np.percentile([10, 20, 30, 40, 50], 95))}
    assert stats.percentiles([]) == {"p50": None, "p95": None}
    assert stats.percentiles([None, float("nan")]) == {"p50": None, "p95": None}


def test_is_binary() -> None:
    assert stats.is_binary([0, 1, 1.0, None])
    assert not stats.is_binary([0, 0.5])
    assert not stats.is_binary([])


# ---------------------------------------------------------------- pass@k


def test_pass_at_k_n10_c3_matches_the_closed_form() -> None:
    got = [stats.pass_at_k(10, 3, k) for k in range(1, 11)]
    ref = [1 - comb(7, k, exact=True) / comb(10, k, exact=True) for k in range(1, 11)]
    assert got == pytest.approx(ref)
    # hand-computed: 1 - C(7,k)/C(10,k)
    assert got[:4] == pytest.approx([0.3, 1 - 21 / 45, 1 - 35 / 120, 1 - 35 / 210])
    assert got[7:] == [1.0, 1.0, 1.0]  # n - c < k: every draw of k holds a pass


def test_pass_at_k_edges_and_large_n_stability() -> None:
    assert stats.pass_at_k(5, 0, 3) == 0.0
    assert stats.pass_at_k(5, 5, 1) == 1.0
    assert stats.pass_at_k(1, 1, 1) == 1.0
    assert stats.pass_at_k(200, 13, 100) == pytest.approx(1 - comb(187, 100, exact=True) / comb(200, 100, exact=True))
    for bad in [(3, 4, 1), (3, 1, 0), (3, 1, 4)]:
        with pytest.raises(ValueError):
            stats.pass_at_k(*bad)


def test_pass_at_k_table_averages_over_samples_and_reports_exclusions() -> None:
    rows = [row("a", i, correct=c) for i, c in enumerate([True, False, False])]
    rows += [row("b", i, correct=c) for i, c in enumerate([True, True, True])]
    rows += [row("c", i, correct=c) for i, c in enumerate([False, True])]
    rows += [row("d", 0, error="infra down", error_kind="system_error")]  # excluded entirely
    table = stats.pass_at_k_table(rows)
    assert [t["k"] for t in table] == [1, 2, 3]
    assert table[0]["pass_at_k"] == pytest.approx(np.mean([stats.pass_at_k(3, 1, 1), 1.0, stats.pass_at_k(2, 1, 1)]))
    assert table[1]["pass_at_k"] == pytest.approx(np.mean([stats.pass_at_k(3, 1, 2), 1.0, 1.0]))
    assert table[2] == {"k": 3, "pass_at_k": pytest.approx(1.0), "n_samples": 2, "n_excluded": 1}
    assert stats.pass_at_k_table([]) == []


def test_pass_at_k_table_single_attempt_is_accuracy() -> None:
    rows = [row(str(i), score=float(i % 2)) for i in range(10)]
    assert stats.pass_at_k_table(rows) == [{"k": 1, "pass_at_k": 0.5, "n_samples": 10, "n_excluded": 0}]


def test_attempt_passed_rules() -> None:
    assert stats.attempt_passed(row("a", correct=False, score=1.0)) is False  # the source's verdict wins
    assert stats.attempt_passed(row("a", score=1.0)) is True
    assert stats.attempt_passed(row("a", score=0.7)) is False
    assert stats.attempt_passed(row("a", score=0.7), threshold=0.5) is True
    assert stats.attempt_passed(row("a")) is None
    assert stats.attempt_passed(row("a", error="boom")) is None  # error without a score: system error
    assert stats.attempt_passed(row("a", score=0.0, error="bad", error_kind="ValueError")) is False


def test_flaky_share() -> None:
    rows = [row("a", 0, correct=True), row("a", 1, correct=False),
            row("b", 0, correct=True), row("b", 1, correct=True),
            row("c", 0, correct=True), row("c", 1, error="x", error_kind="system_error"),  # one graded attempt
            row("d", 0, score=0.2), row("d", 1, score=0.3)]
    share = stats.flaky_share(rows)
    assert (share.n_flaky, share.n_samples) == (2, 3)
    assert share.share == pytest.approx(2 / 3)
    assert share.sample_ids == ("a", "d")
    single = stats.flaky_share([row("a", correct=True), row("b", correct=False)])
    assert single.share is None and single.n_samples == 0


# ---------------------------------------------------------------- paired tests


@pytest.mark.parametrize(("b", "c"), [(8, 0), (3, 10), (5, 5), (1, 0), (12, 4), (40, 25)])
def test_mcnemar_exact_equals_scipy_binomtest(b: int, c: int) -> None:
    res = stats.mcnemar_exact(b, c)
    assert res.p_value == pytest.approx(sps.binomtest(b, b + c, 0.5).pvalue, rel=1e-12)
    assert res.n == b + c
    assert stats.mcnemar_exact(c, b).p_value == pytest.approx(res.p_value)


def test_mcnemar_hand_value_and_no_discordant_pairs() -> None:
    assert stats.mcnemar_exact(8, 0).p_value == pytest.approx(2 * 0.5**8)
    none = stats.mcnemar_exact(0, 0)
    assert none.p_value == 1.0 and none.n == 0 and none.note


def test_wilcoxon_matches_scipy() -> None:
    a = [0.1, 0.4, 0.5, 0.3, 0.9, 0.2, 0.6, 0.45]
    b = [0.3, 0.35, 0.8, 0.5, 0.95, 0.1, 0.9, 0.7]
    res = stats.wilcoxon_paired(a, b)
    ref = sps.wilcoxon(b, a)
    assert res.p_value == pytest.approx(ref.pvalue)
    assert res.test == stats.WILCOXON and res.n == 8


def test_wilcoxon_all_zero_differences_and_missing_values() -> None:
    same = stats.wilcoxon_paired([0.1, 0.2, 0.3], [0.1, 0.2, 0.3])
    assert same.p_value == 1.0 and same.n == 0 and same.note
    with_none = stats.wilcoxon_paired([0.1, None, 0.5, 0.2, 0.7, 0.3], [0.4, 0.9, 0.2, 0.6, 0.8, 0.9])
    assert with_none.p_value == pytest.approx(sps.wilcoxon([0.4, 0.2, 0.6, 0.8, 0.9], [0.1, 0.5, 0.2, 0.7, 0.3]).pvalue)
    assert stats.wilcoxon_paired([], []).p_value is None


def test_paired_bootstrap_matches_scipy_paired() -> None:
    a = np.array([0.1, 0.4, 0.5, 0.3, 0.9, 0.2, 0.6, 0.45])
    b = np.array([0.3, 0.35, 0.8, 0.5, 0.95, 0.1, 0.9, 0.7])
    ci = stats.paired_bootstrap_ci(a, b, n_resamples=3000, seed=3)
    ref = sps.bootstrap((a, b), lambda x, y, axis=-1: np.mean(y - x, axis=axis), paired=True, vectorized=True,
                        n_resamples=3000, method="BCa", rng=np.random.default_rng(3))
    assert ci.estimate == pytest.approx(float((b - a).mean()))
    assert (ci.low, ci.high) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    assert stats.paired_bootstrap_ci(a, b) == stats.paired_bootstrap_ci(a, b)  # fixed seed
    constant = stats.paired_bootstrap_ci([0, 1], [1, 2])
    assert (constant.estimate, constant.low, constant.high) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        stats.paired_bootstrap_ci([1, 2], [1])


def test_newcombe_paired_interval_matches_published_example() -> None:
    # Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables", ch. 8 (R package contingencytables,
    # Cavo et al. 2012 data):
    # table [[59, 6], [16, 80]], Newcombe square-and-add: -0.0621 (95% CI -0.1186 to -0.0046).
    ci = stats.paired_proportion_diff_ci(both=59, only_b=6, only_a=16, neither=80)
    assert ci.estimate == pytest.approx(-0.0621, abs=1e-4)
    assert (ci.low, ci.high) == pytest.approx((-0.1186, -0.0046), abs=1e-4)
    assert "Newcombe" in ci.method


def test_newcombe_degenerate_tables() -> None:
    agree = stats.paired_proportion_diff_ci(10, 0, 0, 10)
    assert agree.estimate == 0.0 and agree.low < 0.0 < agree.high  # no collapse to [0, 0]
    allpass = stats.paired_proportion_diff_ci(5, 0, 0, 0)
    assert allpass.estimate == 0.0 and allpass.low <= 0.0 <= allpass.high
    flipped = stats.paired_proportion_diff_ci(0, 6, 0, 0)
    assert flipped.estimate == 1.0 and -1.0 <= flipped.low <= 1.0 and flipped.high == pytest.approx(1.0)
    assert stats.paired_proportion_diff_ci(0, 0, 0, 0).estimate is None


def test_clean_drops_missing() -> None:
    arr = stats.clean([1, None, float("nan"), 2.5])
    assert arr.tolist() == [1.0, 2.5]
    assert math.isclose(arr.sum(), 3.5)
