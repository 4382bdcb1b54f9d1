"""The sidebar every page shares: where the data comes from, add a source, refresh."""

from __future__ import annotations

import streamlit as st

from dashboard import data, state, uploads


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
        dropped = st.file_uploader("Open a log, results file or zip", type=uploads.ACCEPTED, accept_multiple_files=True,
                                   max_upload_size=uploads.MAX_UPLOAD_MB, key="sources.upload")
        if dropped:
            _add_uploads(dropped)
        if st.button("Refresh", icon=":material/refresh:", key="sources.refresh",
                     help="Re-read sources that changed (mtime, ETag, job state)"):
            data.refresh()
            st.rerun()


def _add_uploads(files: list) -> None:
    """Store new uploads in this session's temp folder and add each as a source (once)."""
    seen = st.session_state.setdefault("sources.upload_ids", {})
    folder = uploads.session_folder(st.session_state.get("sources.upload_dir"))
    st.session_state["sources.upload_dir"] = str(folder)
    added = list(st.session_state.get(state.ADDED_SOURCES, []))
    for f in files:
        if f.file_id in seen:
            continue
        path = uploads.store(folder, f.name, f.getvalue())
        seen[f.file_id] = str(path)
        added.append(str(path))
    if added != list(st.session_state.get(state.ADDED_SOURCES, [])):
        st.session_state[state.ADDED_SOURCES] = list(dict.fromkeys(added))
        st.rerun()
