"""Which run a page shows: the one `?run=` names, or a picker when it names none or an unknown one."""

from __future__ import annotations

import streamlit as st

from dashboard import data, state
from loaders.catalog import Entry


def chosen_entry(page_key: str) -> Entry:
    """The run of `?run=`; otherwise say why, offer every run, and stop the page here."""
    run_id = state.param(state.RUN)
    entry = data.entry(run_id)
    if entry is not None:
        return entry
    if run_id:
        st.error("No run with this id in the configured sources.")
        st.code(run_id, language=None)
        st.caption("It may come from a source this session has not added, or the file was renamed.")
    else:
        st.info("No run chosen: pick one on the Runs page, or here.")
    runs = data.catalog(show_progress=False).entries
    picked = st.selectbox("Run", list(runs), index=None, format_func=lambda r: f"{r} · {runs[r].run.display_name}",
                          key=f"{page_key}.run", placeholder="Pick a run")
    if picked:
        st.query_params.from_dict({state.RUN: picked})
        st.rerun()
    st.page_link("views/runs.py", label="All runs", icon=":material/table_rows:")
    st.stop()
