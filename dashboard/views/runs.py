"""Runs: every run of every source, sortable, with what failed to load; pick runs to open or compare."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from dashboard import data, state
from dashboard.components import safe, tables
from loaders import query

st.title("Runs")
catalog = data.catalog()
summaries = [data.summary_of(e) for e in catalog.entries.values()]

if catalog.problems:
    n = sum(len(v) for v in catalog.problems.values())
    with st.expander(f"What failed to load ({n})", icon=":material/warning:", expanded=not summaries):
        for source, problems in catalog.problems.items():
            st.text(source)
            safe.warnings_list(problems)

if not summaries:
    st.info("No runs found. Add a log file, a trace folder or a backend URL in the sidebar.")
    st.stop()

frame = query.runs_frame(summaries)
frame.insert(1, "open", [f"/run?{urlencode({state.RUN: run_id})}" for run_id in frame["run_id"]])
event = st.dataframe(
    frame, key="runs.table", on_select="rerun", selection_mode="multi-row", hide_index=True,
    column_config=tables.runs_columns(), width="stretch",
)
selected = [str(frame.iloc[i]["run_id"]) for i in event.selection.rows] if event and event.selection else []
st.caption(f"{len(frame)} runs · select one to open it, two or more to compare")

cols = st.columns(4)
if cols[0].button("Summary", disabled=len(selected) != 1, icon=":material/insights:", key="runs.open"):
    st.switch_page("views/run.py", query_params={state.RUN: selected[0]})
if cols[1].button("Per-seed table", disabled=len(selected) != 1, icon=":material/table:", key="runs.seeds"):
    st.switch_page("views/seeds.py", query_params={state.RUN: selected[0]})
if cols[2].button("Compare", disabled=len(selected) < 2, icon=":material/compare_arrows:", key="runs.compare"):
    st.switch_page("views/compare.py", query_params={state.RUNS: ",".join(selected), state.BASELINE: selected[0]})

flagged = [s for s in summaries if s["warnings"]]
if flagged:
    with st.expander(f"Load warnings of {len(flagged)} run(s)", icon=":material/info:"):
        for s in flagged:
            st.text(f"{s['run_id']} · {s['display_name']}")
            st.code("\n".join(s["warnings"]), language=None, wrap_lines=True)
