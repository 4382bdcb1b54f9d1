"""Run summary (`/run?run=ID`): how good is this run, really, and how sure can we be?

Thin: read `run` from the URL, get the figures from `data.stats_of` (computed by
loaders.query/loaders.stats, cached), draw them with components.run_summary/charts.
"""

from __future__ import annotations

import streamlit as st

from dashboard import data, state
from dashboard.components import charts, run_picker, safe
from dashboard.components import run_summary as show
from loaders.errors import SourceError

st.title("Run summary")
entry = run_picker.chosen_entry("run")

run = entry.run
st.text(f"{entry.run_id} · {run.display_name}")
st.text(" · ".join(p for p in (run.eval_name, run.model, run.source_kind, run.status) if p))
links = st.columns(4)
links[0].page_link("views/seeds.py", label="Per-seed table", icon=":material/table:", query_params={state.RUN: entry.run_id})
links[1].page_link("views/seeds.py", label="Failed seeds", icon=":material/cancel:",
                   query_params={state.RUN: entry.run_id, state.STATUS: "failed"})
links[2].page_link("views/seeds.py", label="Errored seeds", icon=":material/error:",
                   query_params={state.RUN: entry.run_id, state.STATUS: "errored"})
links[3].page_link("views/transcript.py", label="Transcripts", icon=":material/forum:", query_params={state.RUN: entry.run_id})



@st.fragment(run_every="5s")
def live_progress() -> None:
    """Poll a running job every 5 s; when it moves, rerun the page so every figure follows."""
    try:
        fresh = data.live_run(entry)
    except SourceError as exc:
        show.job_progress(run)
        st.warning("Could not refresh the job; showing what was loaded before.", icon=":material/sync_problem:")
        st.code(exc.detail, language=None, wrap_lines=True)
        return
    show.job_progress(fresh)
    if (fresh.status, fresh.progress_completed) != (run.status, run.progress_completed):
        st.rerun()


if run.source_kind == "backend" and run.status in show.LIVE_STATUSES:
    live_progress()
else:
    show.job_progress(run)

try:
    stats = data.stats_of(entry)
except Exception as exc:  # noqa: BLE001 - a broken source must show its reason, not a traceback
    st.error("The samples of this run could not be loaded.")
    st.code(exc.detail if isinstance(exc, SourceError) else f"{type(exc).__name__}: {exc}", language=None)
    stats = None

aggregate_only = run.attribution == "aggregate_only" and (stats is None or not stats["n_attempts"])
if aggregate_only:
    st.warning("Per-sample results cannot be reconstructed for this run (aggregate only): the figures below come from "
               "the run's aggregate counts, and per-sample figures are not shown.", icon=":material/warning:")

if stats is not None:
    st.subheader("Headline")
    show.headline(stats)
    st.subheader("Errors: excluded vs counted")
    show.error_figures(stats)
    if stats["pass_at_k"]:
        st.subheader(f"pass@k (up to {stats['max_attempts']} attempts per sample)")
        left, right = st.columns([3, 2])
        with left:
            table = show.pass_at_k(stats)
        right.altair_chart(charts.pass_at_k_line(table), width="stretch")
    st.subheader("Upstream report vs evaldash")
    show.reported(stats)

if stats is not None and not aggregate_only:
    st.subheader("Finish reasons and errors")
    show.finish_reasons(stats, entry.run_id)
    st.subheader("Latency, tokens and cost")
    show.usage(stats)
    frame = data.seeds_of(entry, grouped=False)
    cols = st.columns(3)
    cols[0].altair_chart(charts.score_distribution(frame, stats["binary"]), width="stretch")
    for col, (name, title, unit) in zip(cols[1:], (("latency_ms", "Latency", "ms"), ("tokens_total", "Tokens", "")),
                                        strict=True):
        if stats["usage"][name]["n_known"]:
            col.altair_chart(charts.distribution(frame[name], title, unit), width="stretch")
        else:
            col.caption(f"{title}: unknown (no source recorded it).")

if aggregate_only:
    with st.expander("Aggregate counts", expanded=True):
        st.json(run.aggregates)
with st.expander("Run config / spec"):
    st.json(run.config, expanded=2)
if run.reported_metrics:
    with st.expander(f"Upstream report as recorded ({len(run.reported_metrics)} fields)"):
        st.json(run.reported_metrics, expanded=1)
with st.expander(f"Load warnings ({len(run.warnings)})", icon=":material/info:", expanded=aggregate_only):
    safe.warnings_list(run.warnings)
if stats is not None:
    with st.expander("All figures as JSON"):
        st.json(stats, expanded=1)
