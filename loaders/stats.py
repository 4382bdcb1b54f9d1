"""Statistics for run pages and comparisons, delegated to scipy wherever scipy has the method.

Pure functions, no I/O and no streamlit. Every interval carries the name of the method
that produced it, so a page can label it; "unknown" is None, never 0.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy import stats as sps

from loaders.schema import SampleRow

BOOTSTRAP_SEED = 20240601  # fixed: the same data must always give the same interval
BOOTSTRAP_RESAMPLES = 9999

WILSON = "Wilson score interval"
T_INTERVAL = "t interval"
BOOTSTRAP = "bootstrap (BCa)"
PAIRED_BOOTSTRAP = "paired bootstrap (BCa) on the mean difference"
NEWCOMBE_PAIRED = "Newcombe (1998) method 10: Wilson-based interval for paired proportions"
MCNEMAR = "exact McNemar (two-sided binomial test on discordant pairs)"
WILCOXON = "Wilcoxon signed-rank"


@dataclass(frozen=True)
class Interval:
    """A point estimate with its interval; low/high are None when the data cannot give one."""

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    method: str
    confidence: float = 0.95

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PairedTest:
    """A paired significance test; `p_value` is None only when there is nothing to test."""

    test: str
    p_value: float | None
    statistic: float | None
    n: int  # pairs that carried information (discordant pairs, non-zero differences)
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FlakyShare:
    share: float | None  # None when no sample has two or more graded attempts
    n_flaky: int
    n_samples: int  # samples with at least two graded attempts
    sample_ids: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "sample_ids": list(self.sample_ids)}


def clean(values: Iterable[Any]) -> np.ndarray:
    """Float array without None/NaN: missing scores are not zeros."""
    out = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return np.asarray(out, dtype="float64")


def _f(x: Any) -> float | None:
    """numpy scalar to float; NaN to None."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def is_binary(values: Iterable[Any]) -> bool:
    """True when every present value is 0 or 1 (pass/fail), and there is at least one."""
    arr = clean(values)
    return arr.size > 0 and bool(np.isin(arr, (0.0, 1.0)).all())


# ---------------------------------------------------------------- one run


def proportion_ci(k: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval (scipy): sane at 0/n and n/n, where the Wald interval collapses."""
    if n <= 0:
        return Interval(None, None, None, 0, WILSON, confidence)
    ci = sps.binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return Interval(k / n, _f(ci.low), _f(ci.high), int(n), WILSON, confidence)


def mean_ci(values: Iterable[Any], confidence: float = 0.95) -> Interval:
    """Student t interval for the mean (scipy `ttest_1samp(...).confidence_interval`)."""
    arr = clean(values)
    n = int(arr.size)
    if n == 0:
        return Interval(None, None, None, 0, T_INTERVAL, confidence)
    mean = float(arr.mean())
    if n == 1:
        return Interval(mean, None, None, 1, T_INTERVAL, confidence)
    if np.ptp(arr) == 0:  # no spread: the interval is the point (scipy would warn about precision)
        return Interval(mean, mean, mean, n, T_INTERVAL, confidence)
    ci = sps.ttest_1samp(arr, 0.0).confidence_interval(confidence_level=confidence)
    return Interval(mean, _f(ci.low), _f(ci.high), n, T_INTERVAL, confidence)


def bootstrap_ci(values: Iterable[Any], confidence: float = 0.95, n_resamples: int = BOOTSTRAP_RESAMPLES,
                 seed: int = BOOTSTRAP_SEED) -> Interval:
    """BCa bootstrap interval of the mean (scipy.stats.bootstrap), seeded so pages are stable."""
    arr = clean(values)
    n = int(arr.size)
    if n == 0:
        return Interval(None, None, None, 0, BOOTSTRAP, confidence)
    mean = float(arr.mean())
    if n == 1:
        return Interval(mean, None, None, 1, BOOTSTRAP, confidence)
    if np.ptp(arr) == 0:
        return Interval(mean, mean, mean, n, BOOTSTRAP, confidence)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sps.bootstrap((arr,), np.mean, confidence_level=confidence, n_resamples=n_resamples, method="BCa",
                            rng=np.random.default_rng(seed))
    return Interval(mean, _f(res.confidence_interval.low), _f(res.confidence_interval.high), n, BOOTSTRAP, confidence)


def headline(scores: Iterable[Any], binary: bool, confidence: float = 0.95) -> Interval:
    """The run's headline: Wilson for pass/fail scores, t interval for continuous ones."""
    arr = clean(scores)
    if binary:
        return proportion_ci(int((arr == 1.0).sum()), int(arr.size), confidence)
    return mean_ci(arr, confidence)


def percentiles(values: Iterable[Any], qs: Sequence[int] = (50, 95)) -> dict[str, float | None]:
    """{"p50": ..., "p95": ...} (linear interpolation, numpy's default); None when nothing is known."""
    arr = clean(values)
    if arr.size == 0:
        return {f"p{q}": None for q in qs}
    return {f"p{q}": float(np.percentile(arr, q)) for q in qs}


# ---------------------------------------------------------------- attempts


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of Chen et al. 2021: 1 - C(n-c, k) / C(n, k), in the stable product form."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (got n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def attempt_passed(row: SampleRow, threshold: float = 1.0) -> bool | None:
    """Pass/fail of one attempt: the source's `correct` when given, else score >= threshold.

    System errors (nanoeval excludes them) and ungraded attempts are None: not a fail.
    """
    if row.is_system_error:
        return None
    if row.correct is not None:
        return bool(row.correct)
    if row.score is None or math.isnan(row.score):
        return None
    return row.score >= threshold


def attempt_outcome(row: SampleRow) -> float | None:
    """What "attempts agree" compares: `correct` as 0/1 when given, else the score; None if ungraded."""
    if row.is_system_error:
        return None
    if row.correct is not None:
        return float(row.correct)
    return None if row.score is None or math.isnan(row.score) else float(row.score)


def _by_sample(rows: Iterable[SampleRow]) -> dict[str, list[SampleRow]]:
    groups: dict[str, list[SampleRow]] = {}
    for r in rows:
        groups.setdefault(r.sample_id, []).append(r)
    return groups


def pass_at_k_table(rows: Sequence[SampleRow], max_k: int | None = None) -> list[dict[str, Any]]:
    """pass@k for k = 1..max attempts, averaged over samples; samples with fewer than k graded
    attempts are excluded from that k (and counted in `n_excluded`)."""
    per_sample = []
    for items in _by_sample(rows).values():
        graded = [p for p in (attempt_passed(r) for r in items) if p is not None]
        if graded:
            per_sample.append((len(graded), sum(graded)))
    if not per_sample:
        return []
    top = max(n for n, _ in per_sample)
    if max_k is not None:
        top = min(top, max_k)
    table = []
    for k in range(1, top + 1):
        values = [pass_at_k(n, c, k) for n, c in per_sample if n >= k]
        table.append({"k": k, "pass_at_k": float(np.mean(values)) if values else None, "n_samples": len(values),
                      "n_excluded": len(per_sample) - len(values)})
    return table


def flaky_samples(rows: Sequence[SampleRow]) -> tuple[list[str], int]:
    """Ids of samples whose graded attempts disagree, and how many samples had 2+ graded attempts."""
    flaky, eligible = [], 0
    for sample_id, items in _by_sample(rows).items():
        outcomes = [o for o in (attempt_outcome(r) for r in items) if o is not None]
        if len(outcomes) < 2:
            continue
        eligible += 1
        if len(set(outcomes)) > 1:
            flaky.append(sample_id)
    return flaky, eligible


def flaky_share(rows: Sequence[SampleRow]) -> FlakyShare:
    """Share of samples (with 2+ graded attempts) whose attempts disagree."""
    ids, eligible = flaky_samples(rows)
    return FlakyShare(len(ids) / eligible if eligible else None, len(ids), eligible, tuple(ids))


# ---------------------------------------------------------------- paired comparison


def mcnemar_exact(b: int, c: int) -> PairedTest:
    """Exact McNemar: two-sided binomial test of b vs c discordant pairs at p = 0.5 (scipy)."""
    n = int(b) + int(c)
    if n == 0:
        return PairedTest(MCNEMAR, 1.0, None, 0, "no discordant pairs")
    res = sps.binomtest(int(b), n, 0.5, alternative="two-sided")
    return PairedTest(MCNEMAR, float(res.pvalue), float(min(b, c)), n)


def _pair(a: Iterable[Any], b: Iterable[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Aligned float arrays, dropping pairs where either side is missing."""
    xs, ys = np.asarray(list(a), dtype="float64"), np.asarray(list(b), dtype="float64")
    if xs.shape != ys.shape:
        raise ValueError(f"paired samples must have the same length ({xs.size} vs {ys.size})")
    keep = ~(np.isnan(xs) | np.isnan(ys))
    return xs[keep], ys[keep]


def wilcoxon_paired(a: Iterable[Any], b: Iterable[Any]) -> PairedTest:
    """Wilcoxon signed-rank on b - a (scipy, zero differences dropped); p = 1 when all are zero."""
    xs, ys = _pair([np.nan if v is None else v for v in a], [np.nan if v is None else v for v in b])
    diffs = ys - xs
    nonzero = int(np.count_nonzero(diffs))
    if nonzero == 0:
        return PairedTest(WILCOXON, 1.0 if diffs.size else None, None, 0, "all paired differences are zero")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sps.wilcoxon(ys, xs, zero_method="wilcox", alternative="two-sided")
    return PairedTest(WILCOXON, _f(res.pvalue), _f(res.statistic), nonzero)


def paired_bootstrap_ci(a: Iterable[Any], b: Iterable[Any], confidence: float = 0.95,
                        n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> Interval:
    """BCa bootstrap interval of mean(b - a), resampling pairs together (scipy, paired=True)."""
    xs, ys = _pair([np.nan if v is None else v for v in a], [np.nan if v is None else v for v in b])
    n = int(xs.size)
    if n == 0:
        return Interval(None, None, None, 0, PAIRED_BOOTSTRAP, confidence)
    diffs = ys - xs
    delta = float(diffs.mean())
    if n == 1:
        return Interval(delta, None, None, 1, PAIRED_BOOTSTRAP, confidence)
    if np.ptp(diffs) == 0:
        return Interval(delta, delta, delta, n, PAIRED_BOOTSTRAP, confidence)

    def mean_delta(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(y - x, axis=axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sps.bootstrap((xs, ys), mean_delta, paired=True, vectorized=True, confidence_level=confidence,
                            n_resamples=n_resamples, method="BCa", rng=np.random.default_rng(seed))
    return Interval(delta, _f(res.confidence_interval.low), _f(res.confidence_interval.high), n, PAIRED_BOOTSTRAP,
                    confidence)


def paired_proportion_diff_ci(both: int, only_b: int, only_a: int, neither: int, confidence: float = 0.95) -> Interval:
    """CI for p_B - p_A on paired pass/fail data: Newcombe (1998) method 10.

    scipy has no paired-proportion interval; this combines scipy's Wilson intervals of the two
    marginal rates with the phi correlation, as published. Unlike a t interval on the 0/1
    differences it does not collapse to [0, 0] when every pair agrees.
    `only_b` = pairs passed by B only (improved), `only_a` = passed by A only (regressed).
    """
    n = both + only_b + only_a + neither
    if n == 0:
        return Interval(None, None, None, 0, NEWCOMBE_PAIRED, confidence)
    p1, p2 = (both + only_b) / n, (both + only_a) / n  # B's and A's pass rate
    w1, w2 = proportion_ci(both + only_b, n, confidence), proportion_ci(both + only_a, n, confidence)
    l1, u1, l2, u2 = w1.low, w1.high, w2.low, w2.high
    assert l1 is not None and u1 is not None and l2 is not None and u2 is not None
    margins = (both + only_b, only_a + neither, both + only_a, only_b + neither)
    phi = 0.0
    if min(margins) > 0:
        num = both * neither - only_b * only_a
        if num > n / 2:
            num -= n / 2
        elif num >= 0:
            num = 0.0
        phi = num / math.sqrt(math.prod(margins))
    delta = p1 - p2
    low = delta - math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    high = delta + math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return Interval(delta, max(-1.0, low), min(1.0, high), n, NEWCOMBE_PAIRED, confidence)

