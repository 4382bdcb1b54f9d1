"""Render helpers for the run summary page: they draw what `query.run_statistics` computed.

No statistics here (those live in loaders/stats.py and loaders/query.py) and no I/O.
Labels and captions are developer-written; anything that came from a source (error
messages, sample ids, report labels, reasons naming them) goes through `st.text`,
`st.code`, `st.json` or a dataframe, which interpret nothing.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.components.seed_table import transcript_url
from loaders.schema import Run

USAGE_LABELS = {
    "latency_ms": "Latency (ms)",
    "tokens_in": "Tokens in",
    "tokens_out": "Tokens out",
    "tokens_total": "Tokens total",
    "cost_usd": "Cost (USD)",
}
UNKNOWN = "unknown"
LIVE_STATUSES = ("running", "pending")


def fmt(value: Any, digits: int = 3) -> str:
    """A figure for display: "unknown" for None/NaN (never 0), ints with separators."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNKNOWN
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{float(value):,.{digits}f}"


def fmt_usage(name: str, value: Any) -> str:
    if value is None:
        return UNKNOWN
    if name.startswith("tokens"):
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
    if name == "cost_usd":
        return f"${value:,.4f}"
    return f"{value:,.0f}"


def interval_text(ci: dict[str, Any]) -> str:
    """"0.424 – 0.670", or why there is no interval."""
    if ci.get("estimate") is None:
        return "no graded attempts"
    if ci.get("low") is None or ci.get("high") is None:
        return "needs 2+ values"
    return f"{ci['low']:.3f} – {ci['high']:.3f}"


def job_progress(run: Run) -> None:
    """Progress of a backend job that is still running (completed / total seeds).

    Kept as one function taking only the run header, so the live view can wrap it in
    `st.fragment(run_every=...)` and re-read the header on each tick.
    """
    if run.status not in LIVE_STATUSES and run.progress_total is None:
        return
    done, total = run.progress_completed, run.progress_total
    if total:
        frac = min(max((done or 0) / total, 0.0), 1.0)
        st.progress(frac, text=f"{done or 0} of {total} done")
    elif run.status in LIVE_STATUSES:
        st.progress(0.0, text="progress unknown")
    if run.status in LIVE_STATUSES:
        st.info("This run is still going: the figures below cover what has finished so far.", icon=":material/pending:")


def headline(stats: dict[str, Any]) -> None:
    """Score, its 95% interval and method, and how many samples/attempts it rests on."""
    h = stats["headline"]
    cols = st.columns(4)
    cols[0].metric("Score", fmt(h["estimate"]), help=h["label"])
    cols[1].metric(f"{round(h['confidence'] * 100)}% CI", interval_text(h), help=h["method"])
    cols[2].metric("Samples", fmt(stats["n_samples"]))
    cols[3].metric("Attempts", fmt(stats["n_attempts"]))
    source = "run aggregates (no per-sample rows)" if h.get("from_aggregates") else f"{h['n']} graded attempts"
    st.caption(f"{h['method']} · n = {h['n']} · from {source} · {h['label']}")


def error_figures(stats: dict[str, Any]) -> None:
    """Error-aware (nanoeval's accuracy) beside error-inclusive, both labelled."""
    rows = []
    for key, name in (("error_aware", "Error-aware"), ("error_inclusive", "Error-inclusive")):
        ci = stats[key]
        rows.append({"figure": name, "score": ci["estimate"], "ci_low": ci["low"], "ci_high": ci["high"], "n": ci["n"],
                     "method": ci["method"], "meaning": ci["label"]})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", column_config={
        "figure": st.column_config.TextColumn("Figure", pinned=True),
        "score": st.column_config.NumberColumn("Score", format="%.3f"),
        "ci_low": st.column_config.NumberColumn("CI low", format="%.3f"),
        "ci_high": st.column_config.NumberColumn("CI high", format="%.3f"),
        "n": st.column_config.NumberColumn("n"),
        "method": st.column_config.TextColumn("Method"),
        "meaning": st.column_config.TextColumn("What it counts"),
    })
    if not stats["n_attempts"]:
        return
    st.caption(f"{stats['n_errors']} attempt(s) errored, {stats['n_system_errors']} of them system errors "
               "(failures outside the model, which nanoeval leaves out of accuracy).")


def pass_at_k(stats: dict[str, Any]) -> pd.DataFrame:
    """pass@1..k (Chen et al. 2021, unbiased) and the flaky share; returns the table for a chart."""
    table = pd.DataFrame(stats["pass_at_k"], columns=["k", "pass_at_k", "n_samples", "n_excluded"])
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "k": st.column_config.NumberColumn("k"),
        "pass_at_k": st.column_config.ProgressColumn("pass@k", min_value=0.0, max_value=1.0, format="%.3f"),
        "n_samples": st.column_config.NumberColumn("Samples", help="Samples with at least k graded attempts"),
        "n_excluded": st.column_config.NumberColumn("Excluded", help="Samples with fewer than k graded attempts"),
    })
    flaky = stats.get("flaky") or {}
    if flaky.get("share") is None:
        st.caption("Flaky share: unknown (no sample has two or more graded attempts).")
    else:
        st.metric("Flaky samples", f"{flaky['share']:.1%}",
                  help="Share of samples (with 2+ graded attempts) whose attempts disagree")
        st.caption(f"{flaky['n_flaky']} of {flaky['n_samples']} samples with 2+ graded attempts disagree across attempts.")
    return table


def finish_reasons(stats: dict[str, Any], run_id: str) -> None:
    """Finish reasons by count, then error kinds with an example message each (inert text)."""
    reasons = pd.DataFrame(stats["finish_reasons"], columns=["finish_reason", "count"])
    if reasons.empty:
        st.caption("No finish reasons recorded.")
    else:
        st.dataframe(reasons, hide_index=True, width="stretch", column_config={
            "finish_reason": st.column_config.TextColumn("Finish reason"),
            "count": st.column_config.NumberColumn("Attempts"),
        })
    errors = stats["errors"]
    if not errors:
        st.caption("No errors recorded.")
        return
    table = pd.DataFrame(errors, columns=["error_kind", "count", "system_error", "example", "example_sample_id"])
    table["transcript"] = [transcript_url(run_id, sid) for sid in table["example_sample_id"]]
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "error_kind": st.column_config.TextColumn("Error kind", pinned=True),
        "count": st.column_config.NumberColumn("Attempts"),
        "system_error": st.column_config.CheckboxColumn("System error"),
        "example": st.column_config.TextColumn("Example message", width="large"),
        "example_sample_id": st.column_config.TextColumn("Example sample"),
        "transcript": st.column_config.LinkColumn("Transcript", display_text="open"),
    })
    with st.expander("Example error messages in full"):
        for e in errors:
            st.text(f"{e['error_kind']} · {e['count']} attempt(s) · e.g. sample {e['example_sample_id']}")
            st.code(str(e["example"]), language=None, wrap_lines=True)


def usage(stats: dict[str, Any]) -> None:
    """Totals, mean, p50/p95 per usage field; "unknown" where no source gave a figure."""
    records = []
    for name, label in USAGE_LABELS.items():
        u = stats["usage"][name]
        records.append({"figure": label, **{k: fmt_usage(name, u.get(k)) for k in ("total", "mean", "p50", "p95")},
                        "known": u["n_known"], "missing": u["n_missing"]})
    st.dataframe(pd.DataFrame(records), hide_index=True, width="stretch", column_config={
        "figure": st.column_config.TextColumn("Figure", pinned=True),
        "total": st.column_config.TextColumn("Total"),
        "mean": st.column_config.TextColumn("Mean"),
        "p50": st.column_config.TextColumn("p50"),
        "p95": st.column_config.TextColumn("p95"),
        "known": st.column_config.NumberColumn("Attempts known", help="Attempts whose source gave this figure"),
        "missing": st.column_config.NumberColumn("Attempts unknown", help="No source: left out, never counted as 0"),
    })
    notes = ["Figures are as the source recorded them; \"unknown\" means no source gave one (never 0)."]
    if stats["usage"]["tokens_total"].get("computed"):
        notes.append("Tokens total computed by evaldash (tokens_computed): tokens in + out summed where the source gave "
                     "no total.")
    st.caption(" ".join(notes))


def reported(stats: dict[str, Any]) -> None:
    """Upstream's own headline beside evaldash's, a difference flagged with its reason(s)."""
    rep = stats["reported"]
    if not rep["available"]:
        st.caption("The source carries no upstream report to set beside evaldash's figures.")
        return
    table = pd.DataFrame([
        {"who": "Upstream", "report": rep.get("label") or "", "metric": rep.get("metric") or "", "value": rep["value"]},
        {"who": "evaldash (error-aware)", "report": "", "metric": "score", "value": stats["error_aware"]["estimate"]},
        {"who": "evaldash (error-inclusive)", "report": "", "metric": "score", "value": stats["error_inclusive"]["estimate"]},
    ])
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "who": st.column_config.TextColumn("Computed by", pinned=True),
        "report": st.column_config.TextColumn("Report"),
        "metric": st.column_config.TextColumn("Metric"),
        "value": st.column_config.NumberColumn("Value", format="%.6f"),
    })
    if rep["mismatch"]:
        st.warning(f"Upstream and evaldash differ by {rep['difference']:+.6f}.", icon=":material/error:")
        st.text("Reason: " + (rep["reason"] or "not known"))
    elif rep["mismatch"] is False:
        st.success("Upstream and evaldash agree.", icon=":material/check_circle:")
        if rep["reason"]:
            st.text("Note: " + rep["reason"])
    else:
        st.caption("evaldash has no figure of its own to compare (no graded attempts).")
