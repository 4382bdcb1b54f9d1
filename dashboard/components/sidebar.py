"""The sidebar every page shares: where the data comes from, add a source, refresh."""

from __future__ import annotations

import streamlit as st

from dashboard import data, state


def render() -> None:
    with st.sidebar:
        st.subheader("Sources")
        for source in data.sources():
            st.text(source)
        with st.form("add_source", clear_on_submit=True, border=False):
            new = st.text_input("Add a file, folder or backend URL", key="sources.new",
                                placeholder="logs/run.jsonl or http://host:8000#job_id")
            if st.form_submit_button("Add source", icon=":material/add:") and new.strip():
                added = list(st.session_state.get(state.ADDED_SOURCES, []))
                added.append(new.strip())
                st.session_state[state.ADDED_SOURCES] = list(dict.fromkeys(added))
                st.rerun()
        if st.button("Refresh", icon=":material/refresh:", help="Re-read sources that changed (mtime, ETag, job state)"):
            data.refresh()
            st.rerun()
