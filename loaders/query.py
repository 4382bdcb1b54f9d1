"""Pure transforms: runs and rows to DataFrames and the figures every page shows.

No streamlit, no I/O: everything here is tested directly.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from loaders import stats
from loaders.formats.index import numeric_sort_key
from loaders.schema import Run, SampleRow

ROW_COLUMNS = [
    "sample_id", "attempt", "score", "correct", "reward_mean", "outcome_score", "events_score", "verifier_score",
    "latency_ms", "tokens_in", "tokens_out", "tokens_total", "tokens_computed", "cost_usd", "finish_reason", "error",
    "error_kind", "n_messages", "grader_log", "attribution", "correct_rule", "flags", "has_transcript",
]
NO_NUMBER = 1 << 62  # numeric_sort_key's marker for ids without a trailing integer


def rows_frame(rows: Sequence[SampleRow]) -> pd.DataFrame:
    """One row per sample x attempt in numeric sample order; stable columns for every source."""
    ordered = sorted(rows, key=lambda r: (r.sort_key, r.attempt))
    data = {col: [getattr(r, col) for r in ordered] for col in ROW_COLUMNS}
    data["flags"] = [", ".join(r.flags) for r in ordered]
    data["system_error"] = [r.is_system_error for r in ordered]
    frame = pd.DataFrame(data, columns=[*ROW_COLUMNS, "system_error"])
    for col in ("score", "reward_mean", "outcome_score", "events_score", "verifier_score", "latency_ms", "cost_usd"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    for col in ("tokens_in", "tokens_out", "tokens_total", "n_messages"):
        frame[col] = pd.array(frame[col].tolist(), dtype="Int64")
    frame["correct"] = pd.array(frame["correct"].tolist(), dtype="boolean")
    frame["attempt"] = frame["attempt"].astype("int64")
    return frame


def is_system_error(row: SampleRow) -> bool:
    """An attempt that failed for reasons outside the model (nanoeval excludes these)."""
    return row.is_system_error


def _mean(values: list[float]) -> float | None:
    clean = [v for v in values if v is not None and not math.isnan(v)]
    return sum(clean) / len(clean) if clean else None


def _total(values: list[Any]) -> Any:
    present = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(present) if present else None


def summarize(run: Run, rows: Sequence[SampleRow]) -> dict[str, Any]:
    """The headline figures of one run, as the CLI's --json and the Runs page show them.

    `score_mean` excludes system errors (as nanoeval's accuracy does); the error-inclusive
    figure counts them as 0. Tokens and cost are None ("unknown"), never 0, without a source.
    """
    samples = {r.sample_id for r in rows}
    scored = [r for r in rows if not is_system_error(r)]
    score_mean = _mean([r.score for r in scored if r.score is not None])
    incl = [0.0 if is_system_error(r) else r.score for r in rows if r.score is not None or is_system_error(r)]
    score_incl = _mean(incl)
    if not rows and run.attribution == "aggregate_only":
        agg = run.aggregates
        if agg.get("match_events"):
            score_mean = agg["match_correct"] / agg["match_events"]
        errors = agg.get("n_error_records", 0)
        score_incl = agg["match_correct"] / (agg["match_events"] + errors) if agg.get("match_events") else None
    return {
        "run_id": run.run_id,
        "source_kind": run.source_kind,
        "source": run.source,
        "location": run.location,
        "display_name": run.display_name,
        "eval_name": run.eval_name,
        "model": run.model,
        "status": run.status,
        "created_at": run.created_at.isoformat() if run.created_at else None,
        "attribution": run.attribution,
        "has_sample_ids": run.has_sample_ids,
        "n_samples": len(samples),
        "n_attempts": len(rows),
        "score_mean": score_mean,
        "score_mean_including_errors": score_incl,
        "n_errors": sum(1 for r in rows if r.error is not None) if rows else run.aggregates.get("n_error_records", 0),
        "tokens_total": _total([r.tokens_total for r in rows]),
        "tokens_computed": any(r.tokens_computed for r in rows),
        "cost_usd_total": _total([r.cost_usd for r in rows]),
        "reported": reported_headline(run),
        "warnings": [w.message if not w.file else f"{w.where()}: {w.message}" for w in run.warnings],
    }


def reported_headline(run: Run) -> dict[str, Any]:
    """The upstream tool's own headline number, whatever it called it."""
    report = run.reported_metrics
    for key in ("accuracy", "mean_score", "mean_reward", "score"):
        value = report.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(value):
            return {"metric": key, "value": float(value), "label": run.report_label}
    return {}


def runs_frame(summaries: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """The Runs page table: one row per run, sortable, key metrics first."""
    columns = ["run_id", "display_name", "score_mean", "reported_score", "n_samples", "n_attempts", "n_errors", "status",
               "model", "eval_name", "source_kind", "created_at", "tokens_total", "cost_usd_total", "n_warnings", "location"]
    records = []
    for s in summaries:
        records.append({**{k: s.get(k) for k in columns}, "reported_score": (s.get("reported") or {}).get("value"),
                        "n_warnings": len(s.get("warnings") or [])})
    frame = pd.DataFrame.from_records(records, columns=columns)
    frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True, errors="coerce", format="ISO8601")
    for col in ("score_mean", "reported_score", "cost_usd_total"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    return frame


# ---------------------------------------------------------------- run statistics (issue 6)

USAGE_FIELDS = ("latency_ms", "tokens_in", "tokens_out", "tokens_total", "cost_usd")
FINISH_ORDER = ["model_ended", "max_steps", "max_time", "max_tokens", "error", "unknown"]
ERROR_AWARE_LABEL = "system errors excluded (as nanoeval computes it)"
ERROR_INCLUSIVE_LABEL = "system errors counted as failures (score 0)"
REPORT_TOLERANCE = 1e-6


def _graded_scores(rows: Sequence[SampleRow]) -> list[float]:
    return [r.score for r in rows if r.score is not None and not is_system_error(r) and not math.isnan(r.score)]


def _inclusive_scores(rows: Sequence[SampleRow]) -> list[float]:
    return [0.0 if is_system_error(r) else r.score for r in rows
            if is_system_error(r) or (r.score is not None and not math.isnan(r.score))]


def _usage(rows: Sequence[SampleRow]) -> dict[str, dict[str, Any]]:
    """Totals, mean and p50/p95 per usage field; None means unknown, never 0."""
    out: dict[str, dict[str, Any]] = {}
    for name in USAGE_FIELDS:
        known = stats.clean(getattr(r, name) for r in rows)
        total = float(known.sum()) if known.size else None
        if total is not None and name.startswith("tokens"):
            total = int(total)
        out[name] = {"total": total, "mean": float(known.mean()) if known.size else None, **stats.percentiles(known),
                     "n_known": int(known.size), "n_missing": len(rows) - int(known.size)}
    out["tokens_total"]["computed"] = any(r.tokens_computed for r in rows)
    return out


def _finish_reasons(rows: Sequence[SampleRow]) -> list[dict[str, Any]]:
    counts = Counter(r.finish_reason or "unknown" for r in rows)
    order = FINISH_ORDER + sorted(set(counts) - set(FINISH_ORDER))
    return [{"finish_reason": k, "count": counts[k]} for k in order if counts.get(k)]


def _error_kinds(rows: Sequence[SampleRow]) -> list[dict[str, Any]]:
    """Error kinds by count, each with the first message seen as an example."""
    groups: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r.error is None:
            continue
        kind = r.error_kind or "error"
        g = groups.setdefault(kind, {"error_kind": kind, "count": 0, "example": r.error, "example_sample_id": r.sample_id,
                                     "system_error": is_system_error(r)})
        g["count"] += 1
    return sorted(groups.values(), key=lambda g: (-g["count"], g["error_kind"]))


def run_statistics(run: Run, rows: Sequence[SampleRow], confidence: float = 0.95) -> dict[str, Any]:
    """Everything the run summary page shows, JSON-able.

    The headline is over graded attempts (system errors excluded, as nanoeval does); the
    error-inclusive figure scores system errors as 0. Pass/fail scores get a Wilson interval,
    continuous ones a t interval. With attempts, pass@k and the flaky share are added.
    """
    per_sample = Counter(r.sample_id for r in rows)
    max_attempts = max(per_sample.values(), default=0)
    aware, incl = _graded_scores(rows), _inclusive_scores(rows)
    binary = stats.is_binary(aware) if aware else bool(run.aggregates.get("match_events"))
    aware_ci = stats.headline(aware, binary, confidence)
    incl_ci = stats.headline(incl, binary and stats.is_binary(incl), confidence)
    from_aggregates = False
    if not rows and run.attribution == "aggregate_only" and run.aggregates.get("match_events"):
        agg = run.aggregates
        aware_ci = stats.proportion_ci(agg.get("match_correct", 0), agg["match_events"], confidence)
        incl_ci = stats.proportion_ci(agg.get("match_correct", 0), agg["match_events"] + agg.get("n_error_records", 0),
                                      confidence)
        from_aggregates = True
    n_system = sum(1 for r in rows if is_system_error(r))
    multi = max_attempts > 1
    return {
        "run_id": run.run_id,
        "display_name": run.display_name,
        "binary": binary,
        "n_samples": len(per_sample),
        "n_attempts": len(rows),
        "max_attempts": max_attempts,
        "min_attempts": min(per_sample.values(), default=0),
        "n_graded": len(aware),
        "n_system_errors": n_system,
        "n_errors": sum(1 for r in rows if r.error is not None),
        "headline": {**aware_ci.as_dict(), "label": ERROR_AWARE_LABEL, "from_aggregates": from_aggregates},
        "error_aware": {**aware_ci.as_dict(), "label": ERROR_AWARE_LABEL},
        "error_inclusive": {**incl_ci.as_dict(), "label": ERROR_INCLUSIVE_LABEL},
        "pass_at_k": stats.pass_at_k_table(rows) if multi else [],
        "flaky": stats.flaky_share(rows).as_dict() if multi else None,
        "finish_reasons": _finish_reasons(rows),
        "errors": _error_kinds(rows),
        "usage": _usage(rows),
        "reported": report_comparison(run, rows, aware_ci.estimate, incl_ci.estimate),
        "warnings": [w.message if not w.file else f"{w.where()}: {w.message}" for w in run.warnings],
    }


def _close(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= REPORT_TOLERANCE


def _printed_decimals(value: float) -> int | None:
    """Decimals of a reported figure that looks rounded for print (3 to 6 places), else None."""
    text = repr(float(value))
    if "e" in text or "." not in text:
        return None
    places = len(text.split(".")[1])
    return places if 3 <= places <= 6 else None


def report_comparison(run: Run, rows: Sequence[SampleRow], ours: float | None, ours_inclusive: float | None = None
                      ) -> dict[str, Any]:
    """Upstream's headline beside evaldash's, with `mismatch` and the reasons evaldash can name."""
    reported = reported_headline(run)
    if not reported:
        return {"available": False, "label": run.report_label, "metric": None, "value": None, "evaldash_value": ours,
                "difference": None, "mismatch": None, "reason": None, "reasons": []}
    value = reported["value"]
    mismatch = None if ours is None else not _close(ours, value)
    decimals = _printed_decimals(value)
    rounded = bool(mismatch and ours is not None and decimals is not None and round(ours, decimals) == value)
    if rounded:  # e.g. a text report's avg row prints 0.6667 for 2/3
        mismatch = False
    reasons: list[str] = [f"upstream rounds to {decimals} decimals"] if rounded else []
    if mismatch:
        label = run.report_label or ""
        if "partial" in label.lower():
            reasons.append(f"the upstream report is a {label} (written before every sample finished)")
        agg = run.aggregates
        events, correct = agg.get("match_events"), agg.get("match_correct")
        with_match = sum(1 for r in rows if r.correct is not None)
        if events and events != with_match:
            per_event = correct / events if correct is not None else None
            how = " (that average equals the report)" if _close(per_event, value) else ""
            reasons.append(f"openai/evals averages over match events ({correct}/{events}), evaldash over samples "
                           f"({with_match} with a match){how}")
        several = sum(1 for r in rows if "several_matches" in r.flags)
        if several:
            reasons.append(f"{several} sample(s) have several match events; evaldash keeps the last one per sample")
        if _close(ours_inclusive, value):
            reasons.append("upstream counts errored attempts as failures (evaldash's error-inclusive figure matches)")
        if run.status not in ("completed", "unknown"):
            reasons.append(f"the run is {run.status}")
    return {"available": True, "label": reported.get("label"), "metric": reported["metric"], "value": value,
            "evaldash_value": ours, "difference": None if ours is None else ours - value, "mismatch": mismatch,
            "reason": "; ".join(reasons) or None, "reasons": reasons}


# ---------------------------------------------------------------- per-seed table (issue 6)

STATUSES = ("all", "passed", "failed", "errored", "flaky")


def _with_status(frame: pd.DataFrame) -> pd.DataFrame:
    """Adds passed / errored / flaky / status columns, vectorised (same rules as loaders.stats)."""
    system = frame["system_error"].astype(bool)
    correct = frame["correct"]
    by_score = pd.array((frame["score"] >= 1.0).where(frame["score"].notna()).tolist(), dtype="boolean")
    passed = correct.where(correct.notna(), pd.Series(by_score, index=frame.index)).astype("boolean")
    passed = passed.mask(system.to_numpy(), pd.NA)
    outcome = correct.astype("Float64").where(correct.notna(), frame["score"]).mask(system.to_numpy(), pd.NA)
    flaky = outcome.groupby(frame["sample_id"], sort=False).transform("nunique") > 1
    frame = frame.assign(passed=passed, errored=frame["error"].notna(), system_error=system, flaky=flaky.astype(bool))
    frame["status"] = np.select([frame["errored"].to_numpy(), passed.fillna(False).to_numpy(dtype=bool),
                                 (~passed.fillna(True)).to_numpy(dtype=bool)], ["errored", "passed", "failed"], "ungraded")
    return frame


def seed_table(rows: Sequence[SampleRow], grouped: bool = False) -> pd.DataFrame:
    """The per-seed table: one row per sample x attempt, or per sample with attempts aggregated.

    Grouped: `k_passed` of `n_graded` ("k/n"), mean score, summed usage, `errored` if any
    attempt errored; `passed` means every graded attempt passed, `failed` none did.
    """
    frame = _with_status(rows_frame(rows))
    if not grouped:
        return frame
    g = frame.groupby("sample_id", sort=False)
    passed_num = frame["passed"].astype("Float64")
    out = pd.DataFrame({
        "n_attempts": g.size(),
        "n_graded": passed_num.notna().groupby(frame["sample_id"], sort=False).sum(),
        "k_passed": passed_num.fillna(0).groupby(frame["sample_id"], sort=False).sum().astype("int64"),
        "score": g["score"].mean(),
        "score_min": g["score"].min(),
        "score_max": g["score"].max(),
    })
    for col in ("reward_mean", "outcome_score", "events_score", "verifier_score"):
        out[col] = g[col].mean()
    for col in ("latency_ms", "tokens_in", "tokens_out", "tokens_total", "cost_usd"):
        out[col] = g[col].sum(min_count=1)
    out["n_messages"] = g["n_messages"].max()
    out["finish_reason"] = g["finish_reason"].first()
    out["error_kind"] = g["error_kind"].first()
    out["n_errors"] = g["errored"].sum().astype("int64")
    out["errored"] = out["n_errors"] > 0
    out["system_error"] = g["system_error"].any()
    out["flaky"] = g["flaky"].any()
    out["has_transcript"] = g["has_transcript"].any()
    for col in ("error", "grader_log"):  # all attempts' text, so search sees every attempt
        present = frame[col].dropna()
        joined = present.groupby(frame.loc[present.index, "sample_id"], sort=False).agg("\n".join)
        out[col] = joined.reindex(out.index)
    out["k_of_n"] = out["k_passed"].astype(str) + "/" + out["n_graded"].astype(str)
    out["passed"] = pd.array(np.where(out["n_graded"] > 0, out["k_passed"] == out["n_graded"], None).tolist(), dtype="boolean")
    n_graded, k = out["n_graded"].to_numpy(), out["k_passed"].to_numpy()
    out["status"] = np.select([out["errored"].to_numpy(dtype=bool), out["flaky"].to_numpy(dtype=bool),
                               (n_graded > 0) & (k == n_graded), (n_graded > 0) & (k == 0)],
                              ["errored", "flaky", "passed", "failed"], "ungraded")
    return out.reset_index()


def filter_rows(frame: pd.DataFrame, status: str = "all", score_min: float | None = None, score_max: float | None = None,
                search: str | None = None, regex: bool = False) -> pd.DataFrame:
    """Filter a `seed_table` frame with vectorised masks (fast at 100k rows).

    status: all / passed / failed / errored / flaky (grouped "failed" = no attempt passed).
    The score range drops unscored rows once a bound is set. `search` matches sample id,
    error and grader log, case-insensitive, as plain text unless `regex` (ValueError if invalid).
    """
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r} (one of {', '.join(STATUSES)})")
    mask = pd.Series(True, index=frame.index)
    if status == "passed":
        mask &= frame["passed"].fillna(False).astype(bool)
    elif status == "failed":
        if "k_passed" in frame:
            mask &= (frame["n_graded"] > 0) & (frame["k_passed"] == 0)
        else:
            mask &= (~frame["passed"].fillna(True)).astype(bool)
    elif status == "errored":
        mask &= frame["errored"].astype(bool)
    elif status == "flaky":
        mask &= frame["flaky"].astype(bool)
    if score_min is not None:
        mask &= (frame["score"] >= score_min).fillna(False).astype(bool)
    if score_max is not None:
        mask &= (frame["score"] <= score_max).fillna(False).astype(bool)
    if search:
        if regex:
            try:
                re.compile(search)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {search!r}: {exc}") from exc
        hit = pd.Series(False, index=frame.index)
        for col in ("sample_id", "error", "grader_log"):
            if col in frame:
                text = frame[col].astype("string")
                hit |= text.str.contains(search, case=False, regex=regex, na=False).astype(bool)
        mask &= hit
    return frame[mask.to_numpy(dtype=bool)]


# ---------------------------------------------------------------- comparison (issue 8)

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
