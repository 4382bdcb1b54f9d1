"""Pure transforms: runs and rows to DataFrames and the figures every page shows.

No streamlit, no I/O: everything here is tested directly.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from loaders import stats
from loaders.patterns import UserPattern
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


FIGURE_KEYS = ("n_samples", "n_attempts", "score_mean", "score_mean_including_errors", "n_errors", "tokens_total",
               "tokens_computed", "cost_usd_total")


def row_figures(run: Run, rows: Sequence[SampleRow]) -> dict[str, Any]:
    """The headline figures that need a run's rows (FIGURE_KEYS): computed once, so a loader can keep them on disk.

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
        "n_samples": len(samples),
        "n_attempts": len(rows),
        "score_mean": score_mean,
        "score_mean_including_errors": score_incl,
        "n_errors": sum(1 for r in rows if r.error is not None) if rows else run.aggregates.get("n_error_records", 0),
        "tokens_total": _total([r.tokens_total for r in rows]),
        "tokens_computed": any(r.tokens_computed for r in rows),
        "cost_usd_total": _total([r.cost_usd for r in rows]),
    }


def summarize(run: Run, rows: Sequence[SampleRow] | None = None, *, figures: dict[str, Any] | None = None) -> dict[str, Any]:
    """The headline figures of one run, as the CLI's --json and the Runs page show them.

    Pass the rows, or their `row_figures` when a loader already has them (the Runs page then loads no rows).
    """
    if figures is None:
        figures = row_figures(run, rows or [])
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
        **{key: figures[key] for key in FIGURE_KEYS},
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
    error and grader log, case-insensitive, as plain text unless `regex` (a `patterns.PatternError`, which is
    a ValueError, if it is invalid or runs out of its time budget).
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
        pattern = UserPattern(search, is_regex=True) if regex else None  # PatternError (a ValueError) if invalid
        hit = pd.Series(False, index=frame.index)
        for col in ("sample_id", "error", "grader_log"):
            if col in frame:
                text = frame[col].astype("string")
                if pattern is None:  # plain text: pandas' own substring search, fast and never slow
                    hit |= text.str.contains(search, case=False, regex=False, na=False).astype(bool)
                else:  # a user's regex: under a time budget (PatternTimeout), never Python's unbounded `re`
                    values = text.dropna()
                    found = pd.Series([pattern.search(v) is not None for v in values], index=values.index, dtype=bool)
                    hit |= found.reindex(frame.index, fill_value=False)
        mask &= hit
    return frame[mask.to_numpy(dtype=bool)]
