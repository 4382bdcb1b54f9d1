"""Transcript: one sample's conversation replayed inert, prev/next/next-failure, and search across the run.

Deep links: `/transcript?run=R&sample=S&attempt=A` opens a transcript (`&part=N`: the Nth hundred items of a
long one), `/transcript?run=R&q=text` (`&regex=1`) searches every transcript of a run.
"""

from __future__ import annotations

import streamlit as st

from dashboard import data, state
from dashboard.components import run_picker
from dashboard.components import transcript as view
from loaders.errors import SourceError
from loaders.patterns import PatternError, PatternTimeout

SEARCH_LIMIT = 200

st.title("Transcript")
entry = run_picker.chosen_entry("transcript")

# A page_link to the page it sits on reruns it with the new params but leaves the address bar as it was
# (Streamlit 1.67); one write sends the whole query string back, so the URL is this page's deep link.
st.query_params[state.RUN] = entry.run_id
st.text(f"{entry.run_id} · {entry.run.display_name}")
try:
    rows = data.rows_of(entry)
except SourceError as exc:
    st.error("The samples of this run could not be loaded.")
    st.code(exc.detail, language=None)
    st.stop()

query, regex = state.param(state.QUERY), state.param(state.REGEX) == "1"
keep = {state.QUERY: query, **({state.REGEX: "1"} if regex else {})} if query else {}
sample = state.param(state.SAMPLE)
with st.expander("Search this run", icon=":material/search:", expanded=bool(query) and sample is None):
    submitted = view.search_form(query, regex)
    if submitted is not None:
        text, is_regex = submitted
        params = {k: v for k, v in st.query_params.to_dict().items() if k not in (state.QUERY, state.REGEX)}
        st.query_params.from_dict({**params, **({state.QUERY: text} if text else {}), **({state.REGEX: "1"} if text and is_regex else {})})
        st.rerun()
    if query:
        try:
            view.search_results(data.search_of(entry, query, regex, SEARCH_LIMIT), SEARCH_LIMIT, keep)
        except PatternError as exc:
            st.error("The search took too long and was stopped." if isinstance(exc, PatternTimeout)
                     else "Not a valid regular expression.")
            st.code(str(exc), language=None)

if not rows:
    st.info("This run has no per-sample rows, so there is no transcript to open.")
    st.stop()
attempt = state.int_param(state.ATTEMPT, 0)
row = next((r for r in rows if r.sample_id == sample and r.attempt == attempt), None)
if sample is not None and row is None:
    st.error("This run has no such sample / attempt.")
    st.code(f"sample={sample} attempt={attempt}", language=None)
elif sample is None and not query:
    row = rows[0]
chosen = view.sample_picker(rows, row, entry.run_id)
if chosen is not None:
    st.query_params.from_dict(view.link_params(entry.run_id, chosen, keep))
    st.rerun()
if row is None:
    st.stop()

view.nav(rows, entry.run_id, row, keep)
view.row_summary(row)
try:
    transcript = data.transcript_of(entry, row.sample_id, row.attempt)
except SourceError as exc:
    st.error("This transcript could not be loaded.")
    st.code(exc.detail, language=None)
    st.stop()
part = state.int_param(state.PART, 1)
view.parts_nav(entry.run_id, row, keep, len(transcript.items), part)
view.replay(transcript, part)
view.grade(transcript.grade)
view.raw_and_download(transcript)
