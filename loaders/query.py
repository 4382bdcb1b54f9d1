"""Pure transforms: runs and rows to DataFrames and the figures every page shows.

No streamlit, no I/O: everything here is tested directly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from loaders.schema import Run, SampleRow

ROW_COLUMNS = [
    "sample_id", "attempt", "score", "correct", "reward_mean", "outcome_score", "events_score", "verifier_score",
    "latency_ms", "tokens_in", "tokens_out", "tokens_total", "tokens_computed", "cost_usd", "finish_reason", "error",
    "error_kind", "n_messages", "grader_log", "attribution", "correct_rule", "flags", "has_transcript",
]
SYSTEM_ERROR_KINDS = {"system_error"}


def rows_frame(rows: Sequence[SampleRow]) -> pd.DataFrame:
    """One row per sample x attempt in numeric sample order; stable columns for every source."""
    ordered = sorted(rows, key=lambda r: (r.sort_key, r.attempt))
    data = {col: [getattr(r, col) for r in ordered] for col in ROW_COLUMNS}
    data["flags"] = [", ".join(r.flags) for r in ordered]
    frame = pd.DataFrame(data, columns=ROW_COLUMNS)
    for col in ("score", "reward_mean", "outcome_score", "events_score", "verifier_score", "latency_ms", "cost_usd"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    for col in ("tokens_in", "tokens_out", "tokens_total", "n_messages"):
        frame[col] = pd.array(frame[col].tolist(), dtype="Int64")
    frame["correct"] = pd.array(frame["correct"].tolist(), dtype="boolean")
    frame["attempt"] = frame["attempt"].astype("int64")
    return frame


def is_system_error(row: SampleRow) -> bool:
    """An attempt that failed for reasons outside the model (nanoeval excludes these)."""
    return row.error is not None and (row.error_kind in SYSTEM_ERROR_KINDS or row.score is None)


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
        if isinstance(value, int | float) and not isinstance(value, bool):
            return {"metric": key, "value": float(value), "label": run.report_label}
    return {}


def runs_frame(summaries: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """The Runs page table: one row per run, sortable, key metrics first."""
    columns = ["run_id", "display_name", "source_kind", "eval_name", "model", "status", "created_at", "n_samples",
               "n_attempts", "score_mean", "reported_score", "n_errors", "tokens_total", "cost_usd_total", "n_warnings",
               "location"]
    records = []
    for s in summaries:
        records.append({**{k: s.get(k) for k in columns}, "reported_score": (s.get("reported") or {}).get("value"),
                        "n_warnings": len(s.get("warnings") or [])})
    frame = pd.DataFrame.from_records(records, columns=columns)
    frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True, errors="coerce", format="ISO8601")
    for col in ("score_mean", "reported_score", "cost_usd_total"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    return frame
