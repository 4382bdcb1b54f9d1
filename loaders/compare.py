"""Comparing runs: align their samples, pair them, and test whether a difference is real.

Used by the Compare page and by `evaldash compare`, so a CI gate and the page never disagree.
Pure: no streamlit, no I/O.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from loaders import stats
from loaders.formats.index import numeric_sort_key
from loaders.query import NO_NUMBER, USAGE_FIELDS, _graded_scores, is_system_error
from loaders.schema import Run, SampleRow

ID_MAPS = ("exact", "numeric")
IdMap = str | Callable[[str], str]


def map_sample_id(sample_id: str, id_map: IdMap = "exact") -> str:
    """The alignment key of a sample id: itself ("exact"), or its trailing integer ("numeric":
    `arc.dev.12` and seed `12` both give "12"; ids without one stay as they are)."""
    if callable(id_map):
        return id_map(sample_id)
    if id_map == "exact":
        return sample_id
    if id_map in ("numeric", "numeric suffix", "numeric_suffix"):
        number, _ = numeric_sort_key(sample_id)
        return str(number) if number != NO_NUMBER else sample_id
    raise ValueError(f"unknown id map {id_map!r} (one of {', '.join(ID_MAPS)})")


@dataclass
class Alignment:
    """Rows of two runs matched on (mapped sample id, attempt); nothing is dropped silently."""

    both: list[tuple[SampleRow, SampleRow]] = field(default_factory=list)
    only_a: list[SampleRow] = field(default_factory=list)
    only_b: list[SampleRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def only_a_samples(self) -> list[str]:
        """A's sample ids with no counterpart sample at all in B."""
        paired = {a.sample_id for a, _ in self.both}
        return _unique(r.sample_id for r in self.only_a if r.sample_id not in paired)

    @property
    def only_b_samples(self) -> list[str]:
        paired = {b.sample_id for _, b in self.both}
        return _unique(r.sample_id for r in self.only_b if r.sample_id not in paired)


def _unique(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _keyed(rows: Sequence[SampleRow], id_map: IdMap, side: str, warnings: list[str]
           ) -> tuple[dict[tuple[str, int], SampleRow], list[SampleRow]]:
    keyed: dict[tuple[str, int], SampleRow] = {}
    clashes: list[SampleRow] = []
    for r in sorted(rows, key=lambda r: (r.sort_key, r.attempt)):
        key = (map_sample_id(r.sample_id, id_map), r.attempt)
        if key in keyed:
            clashes.append(r)
            continue
        keyed[key] = r
    if clashes:
        ids = _unique(r.sample_id for r in clashes)
        warnings.append(f"run {side}: {len(clashes)} row(s) map to an id already taken ({', '.join(ids[:5])}"
                        f"{', ...' if len(ids) > 5 else ''}); listed as only in {side}")
    return keyed, clashes


def align_runs(rows_a: Sequence[SampleRow], rows_b: Sequence[SampleRow], id_map: IdMap = "exact") -> Alignment:
    """Pair rows by (mapped sample id, attempt); unmatched rows land in only_a / only_b."""
    warnings: list[str] = []
    keyed_a, clash_a = _keyed(rows_a, id_map, "A", warnings)
    keyed_b, clash_b = _keyed(rows_b, id_map, "B", warnings)
    both = [(row, keyed_b[key]) for key, row in keyed_a.items() if key in keyed_b]
    only_a = [row for key, row in keyed_a.items() if key not in keyed_b] + clash_a
    only_b = [row for key, row in keyed_b.items() if key not in keyed_a] + clash_b
    return Alignment(both, only_a, only_b, warnings)


def _paired_value(row: SampleRow, errors: str) -> float | None:
    if is_system_error(row):
        return 0.0 if errors == "as_fail" else None
    if row.score is not None and not math.isnan(row.score):
        return float(row.score)
    return None if row.correct is None else float(row.correct)


def _change(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "excluded"
    return "improved" if b > a else "regressed" if b < a else "unchanged"


def _usage_deltas(pairs: Sequence[tuple[SampleRow, SampleRow]]) -> dict[str, dict[str, Any]]:
    """B - A per usage field over aligned pairs where both sides are known (None when none are)."""
    out = {}
    for name in USAGE_FIELDS:
        known = [(getattr(a, name), getattr(b, name)) for a, b in pairs
                 if getattr(a, name) is not None and getattr(b, name) is not None]
        if not known:
            out[name] = {"total_a": None, "total_b": None, "delta": None, "mean_a": None, "mean_b": None, "n": 0}
            continue
        ta, tb = float(sum(x for x, _ in known)), float(sum(y for _, y in known))
        out[name] = {"total_a": ta, "total_b": tb, "delta": tb - ta, "mean_a": ta / len(known), "mean_b": tb / len(known),
                     "n": len(known)}
    return out


def _run_block(run: Run, rows: Sequence[SampleRow], confidence: float) -> dict[str, Any]:
    scores = _graded_scores(rows)
    ci = stats.headline(scores, stats.is_binary(scores), confidence)
    return {"run_id": run.run_id, "display_name": run.display_name, "source_kind": run.source_kind, "model": run.model,
            "eval_name": run.eval_name, "n_samples": len({r.sample_id for r in rows}), "n_attempts": len(rows),
            "headline": ci.as_dict()}


def _seed_attempts(pairs: Sequence[tuple[SampleRow, SampleRow]], only_a: Sequence[SampleRow], only_b: Sequence[SampleRow],
                   ) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Each shared seed's k/n in both runs, and which seeds became / stopped being flaky."""
    rows_a: dict[str, list[SampleRow]] = {}
    rows_b: dict[str, list[SampleRow]] = {}
    b_name: dict[str, str] = {}
    for a, b in pairs:
        b_name[a.sample_id] = b.sample_id
    b_to_a = {v: k for k, v in b_name.items()}
    for a, _ in pairs:
        rows_a.setdefault(a.sample_id, []).append(a)
    for _, b in pairs:
        rows_b.setdefault(b_to_a[b.sample_id], []).append(b)
    for r in only_a:  # unmatched attempts of shared seeds still count in that run's k/n
        if r.sample_id in rows_a:
            rows_a[r.sample_id].append(r)
    for r in only_b:
        if r.sample_id in b_to_a:
            rows_b[b_to_a[r.sample_id]].append(r)
    seeds, became, stopped = [], [], []
    for sid, items_a in rows_a.items():
        items_b = rows_b.get(sid, [])
        pa = [p for p in (stats.attempt_passed(r) for r in items_a) if p is not None]
        pb = [p for p in (stats.attempt_passed(r) for r in items_b) if p is not None]
        fa = bool(stats.flaky_samples(items_a)[0])
        fb = bool(stats.flaky_samples(items_b)[0])
        seeds.append({"sample_id": sid, "sample_id_b": b_name[sid], "k_a": sum(pa), "n_a": len(pa), "k_b": sum(pb),
                      "n_b": len(pb), "flaky_a": fa, "flaky_b": fb})
        if fb and not fa:
            became.append(sid)
        elif fa and not fb:
            stopped.append(sid)
    return seeds, became, stopped


def compare_runs(run_a: Run, rows_a: Sequence[SampleRow], run_b: Run, rows_b: Sequence[SampleRow], alpha: float = 0.05,
                 id_map: IdMap = "exact", errors: str = "exclude") -> dict[str, Any]:
    """B against A on the aligned samples, JSON-able (the CLI's `compare --json`).

    Unit: the (sample, attempt) pair when both runs have one attempt per sample; with several
    attempts, each sample's mean over its graded attempts (attempt i of A is no twin of
    attempt i of B). Binary units: exact McNemar + Newcombe paired interval; continuous:
    Wilcoxon signed-rank + paired BCa bootstrap. System errors are excluded from the pairs
    (errors="as_fail" scores them 0). `regression` = significant at `alpha` and delta < 0.
    """
    if errors not in ("exclude", "as_fail"):
        raise ValueError("errors must be 'exclude' or 'as_fail'")
    confidence = 1.0 - alpha
    al = align_runs(rows_a, rows_b, id_map)
    flips = []
    for a, b in al.both:
        va, vb = _paired_value(a, errors), _paired_value(b, errors)
        flips.append({"sample_id": a.sample_id, "sample_id_b": b.sample_id, "attempt": a.attempt, "score_a": va,
                      "score_b": vb, "change": _change(va, vb)})
    multi = max(Counter(r.sample_id for r in rows_a).values(), default=0) > 1 or \
        max(Counter(r.sample_id for r in rows_b).values(), default=0) > 1
    if multi:
        units: dict[str, tuple[list[float], list[float]]] = {}
        for f in flips:
            if f["change"] != "excluded":
                ua, ub = units.setdefault(f["sample_id"], ([], []))
                ua.append(f["score_a"])
                ub.append(f["score_b"])
        xs = [float(np.mean(ua)) for ua, _ in units.values()]
        ys = [float(np.mean(ub)) for _, ub in units.values()]
    else:
        used = [f for f in flips if f["change"] != "excluded"]
        xs, ys = [f["score_a"] for f in used], [f["score_b"] for f in used]
    changes = Counter(_change(x, y) for x, y in zip(xs, ys, strict=True))
    binary = bool(xs) and stats.is_binary(xs + ys)
    if binary:
        both_pass = sum(1 for x, y in zip(xs, ys, strict=True) if x == 1 and y == 1)
        neither = sum(1 for x, y in zip(xs, ys, strict=True) if x == 0 and y == 0)
        test = stats.mcnemar_exact(changes["regressed"], changes["improved"])
        ci = stats.paired_proportion_diff_ci(both_pass, changes["improved"], changes["regressed"], neither, confidence)
    else:
        test = stats.wilcoxon_paired(xs, ys)
        ci = stats.paired_bootstrap_ci(xs, ys, confidence)
    delta = float(np.mean(ys) - np.mean(xs)) if xs else None
    significant = test.p_value is not None and test.p_value < alpha
    warnings = list(al.warnings)
    only_a, only_b = al.only_a_samples, al.only_b_samples
    if only_a or only_b:
        warnings.append(f"the runs hold different samples: {len(only_a)} only in A, {len(only_b)} only in B; "
                        "the comparison uses the samples in both")
    n_excluded = sum(1 for f in flips if f["change"] == "excluded")
    if n_excluded:
        warnings.append(f"{n_excluded} aligned pair(s) without a score on one side (system error or ungraded) are excluded")
    result: dict[str, Any] = {
        "run_a": _run_block(run_a, rows_a, confidence),
        "run_b": _run_block(run_b, rows_b, confidence),
        "id_map": id_map if isinstance(id_map, str) else getattr(id_map, "__name__", "custom"),
        "alpha": alpha,
        "confidence": confidence,
        "n_both": len({a.sample_id for a, _ in al.both}),
        "n_pairs": len(al.both),
        "only_a": only_a,
        "only_b": only_b,
        "only_a_attempts": [[r.sample_id, r.attempt] for r in al.only_a if r.sample_id not in set(only_a)],
        "only_b_attempts": [[r.sample_id, r.attempt] for r in al.only_b if r.sample_id not in set(only_b)],
        "sets_differ": bool(al.only_a or al.only_b),
        "unit": "sample" if multi else "attempt",
        "n_used": len(xs),
        "n_excluded": n_excluded,
        "binary": binary,
        "improved": changes["improved"],
        "regressed": changes["regressed"],
        "unchanged": changes["unchanged"],
        "mean_a": float(np.mean(xs)) if xs else None,
        "mean_b": float(np.mean(ys)) if ys else None,
        "delta": delta,
        "delta_ci": [ci.low, ci.high],
        "delta_ci_method": ci.method,
        "p_value": test.p_value,
        "statistic": test.statistic,
        "test": test.test,
        "test_n": test.n,
        "test_note": test.note,
        "significant": significant,
        "regression": bool(significant and delta is not None and delta < 0),
        "improvement": bool(significant and delta is not None and delta > 0),
        "usage": _usage_deltas(al.both),
        "flips": flips,
        "seeds": [],
        "became_flaky": [],
        "stopped_being_flaky": [],
        "warnings": warnings,
    }
    if multi:
        result["seeds"], result["became_flaky"], result["stopped_being_flaky"] = _seed_attempts(al.both, al.only_a, al.only_b)
    return result


def compare_many(runs: Sequence[tuple[Run, Sequence[SampleRow]]], baseline: str | None = None, alpha: float = 0.05,
                 id_map: IdMap = "exact") -> dict[str, Any]:
    """Every run against the baseline (default: the first), with Benjamini-Hochberg adjusted p-values
    (scipy `false_discovery_control`) since several tests are read together."""
    if not runs:
        return {"baseline": None, "headlines": [], "comparisons": []}
    ids = [run.run_id for run, _ in runs]
    base_id = baseline or ids[0]
    if base_id not in ids:
        raise ValueError(f"baseline {base_id!r} is not among the runs ({', '.join(ids)})")
    base_run, base_rows = runs[ids.index(base_id)]
    comparisons = [compare_runs(base_run, base_rows, run, rows, alpha=alpha, id_map=id_map)
                   for run, rows in runs if run.run_id != base_id]
    p_values = [c["p_value"] if c["p_value"] is not None else 1.0 for c in comparisons]
    adjusted = sps.false_discovery_control(p_values).tolist() if len(p_values) > 1 else p_values
    for c, p in zip(comparisons, adjusted, strict=True):
        c["p_value_adjusted"] = float(p)
        c["p_adjust_method"] = "Benjamini-Hochberg" if len(p_values) > 1 else "none (single comparison)"
    return {"baseline": base_id, "headlines": [_run_block(run, rows, 1.0 - alpha) for run, rows in runs],
            "comparisons": comparisons}


def _role_text(message: Any) -> tuple[str, str]:
    if isinstance(message, dict):
        return str(message.get("role", "")), str(message.get("text") or message.get("content") or "").strip()
    return str(getattr(message, "role", "")), str(getattr(message, "text", "") or "").strip()


def transcript_alignment(messages_a: Sequence[Any], messages_b: Sequence[Any]) -> dict[str, Any]:
    """Messages side by side by position; `first_divergence` = first index whose role or text differ
    (None when the transcripts are the same). A missing side counts as a difference."""
    pairs = []
    first: int | None = None
    for i in range(max(len(messages_a), len(messages_b))):
        a = messages_a[i] if i < len(messages_a) else None
        b = messages_b[i] if i < len(messages_b) else None
        same = a is not None and b is not None and _role_text(a) == _role_text(b)
        if not same and first is None:
            first = i
        pairs.append({"index": i, "a": a, "b": b, "same": same})
    return {"pairs": pairs, "first_divergence": first, "n_a": len(messages_a), "n_b": len(messages_b)}


def flips_frame(comparison: Mapping[str, Any]) -> pd.DataFrame:
    """The flips of one `compare_runs` result as a table: one row per aligned sample x attempt."""
    cols = ["sample_id", "sample_id_b", "attempt", "score_a", "score_b", "change"]
    frame = pd.DataFrame(comparison["flips"], columns=cols)
    return frame.astype({"score_a": "float64", "score_b": "float64"})


def seed_points(comparison: Mapping[str, Any]) -> pd.DataFrame:
    """One point per seed: its score, or with several attempts its pass share k/n, in A and in B."""
    if not comparison["seeds"]:
        return flips_frame(comparison)
    rows = []
    for s in comparison["seeds"]:
        a = s["k_a"] / s["n_a"] if s["n_a"] else None
        b = s["k_b"] / s["n_b"] if s["n_b"] else None
        change = "excluded" if a is None or b is None else "improved" if b > a else "regressed" if b < a else "unchanged"
        rows.append({"sample_id": s["sample_id"], "score_a": a, "score_b": b, "change": change})
    return pd.DataFrame(rows, columns=["sample_id", "score_a", "score_b", "change"]).astype({"score_a": "float64",
                                                                                              "score_b": "float64"})
