"""Per-seed table (`/seeds?run=ID&status=failed&q=timeout&smin=0&smax=0.5&group=1&page=2&sort=score&desc=1`).

Which seeds failed, and why? Every filter, the sort, the page and the selected row live
in the URL, so a pasted link reopens the same view. Filter + sort + slice happen in
pandas on the cached table; the grid gets one page, so 100k-row runs stay quick.
"""

from __future__ import annotations

import streamlit as st
from streamlit.errors import StreamlitAPIException

from dashboard import data, state
from dashboard.components import run_picker
from dashboard.components import seed_table as table
from loaders import query
from loaders.errors import SourceError
from loaders.patterns import PatternTimeout

BIND = "query-params"

st.title("Per-seed table")
entry = run_picker.chosen_entry("seeds")

st.text(f"{entry.run_id} · {entry.run.display_name}")
st.page_link("views/run.py", label="Run summary", icon=":material/insights:", query_params={state.RUN: entry.run_id})


def first_page() -> None:
    """A new filter or sort starts at page 1 (the old page number would point into other rows)."""
    st.session_state[state.PAGE] = 1


def on_group() -> None:
    first_page()
    if st.session_state.get(state.SORT) not in table.columns(bool(st.session_state.get("seeds.group"))):
        st.session_state[state.SORT] = table.NATURAL


top = st.columns([3, 4, 1])
status = top[0].segmented_control("Show", query.STATUSES, default="all", required=True, key=state.STATUS, bind=BIND,
                                  on_change=first_page)
search = top[1].text_input("Search sample id, error and grader log", key=state.QUERY, bind=BIND, on_change=first_page,
                           placeholder="e.g. timeout")
with top[2]:
    regex = table.flag("Regex", state.REGEX, "seeds.regex", on_change=first_page, help="Treat the search as a regular expression")
row = st.columns([1, 1, 2, 2, 1, 1])
smin = row[0].number_input("Score ≥", value=None, step=0.1, key=state.SCORE_MIN, bind=BIND, on_change=first_page,
                           placeholder="any")
smax = row[1].number_input("Score ≤", value=None, step=0.1, key=state.SCORE_MAX, bind=BIND, on_change=first_page,
                           placeholder="any")
with row[2]:
    grouped = table.flag("One row per seed (k of n passed)", state.GROUP, "seeds.group", on_change=on_group)
sort = row[3].selectbox("Sort by", table.columns(grouped), key=state.SORT, bind=BIND, on_change=first_page,
                        help="Sorts the whole filtered table (a click on a column header sorts only this page)")
with row[4]:
    desc = table.flag("Descending", state.DESC, "seeds.desc", on_change=first_page)
size = row[5].selectbox("Rows per page", table.PAGE_SIZES, index=table.PAGE_SIZES.index(table.DEFAULT_PAGE_SIZE),
                        key=state.PAGE_SIZE, bind=BIND, on_change=first_page)

try:
    frame = data.seeds_of(entry, grouped)
except Exception as exc:  # noqa: BLE001 - a broken source must show its reason, not a traceback
    st.error("The samples of this run could not be loaded.")
    st.code(exc.detail if isinstance(exc, SourceError) else f"{type(exc).__name__}: {exc}", language=None)
    st.stop()
if frame.empty:
    if entry.run.attribution == "aggregate_only":
        st.warning("This run has no per-sample rows (aggregate only): its log cannot tie results to samples. "
                   "The run summary shows its aggregate counts and why.", icon=":material/warning:")
    else:
        st.info("This run has no sample rows yet.")
    st.stop()

try:
    filtered = data.filtered_seeds_of(entry, grouped, status or "all", smin, smax, search or None, regex)
except ValueError as exc:  # patterns.PatternError: invalid, or out of its time budget
    st.error("The search regular expression took too long and was stopped. Simplify it or turn Regex off."
             if isinstance(exc, PatternTimeout) else "The search is not a valid regular expression. Fix it or turn Regex off.",
             icon=":material/error:")
    st.code(str(exc), language=None)
    st.stop()

ordered = table.sort_frame(filtered, sort, desc)
n_pages = table.page_count(len(ordered), size)
slot = st.container()
page = st.pagination(n_pages, key=state.PAGE, bind=BIND)
rows = table.with_links(table.page_slice(ordered, page, size), entry.run_id, grouped)

selected = state.param(state.SAMPLE)
selected_attempt = state.int_param(state.ATTEMPT) if state.param(state.ATTEMPT) is not None else None
default = table.position_of(rows, selected, selected_attempt, grouped)
unit = "seeds" if grouped else "attempts"
with slot:
    st.caption(f"{len(filtered)} of {len(frame)} {unit} match · page {page} of {n_pages} · select a row to open its transcript")
    event = st.dataframe(
        rows, key=table.table_key(entry.run_id, grouped, status, search, regex, smin, smax, sort, desc, page, size),
        on_select="rerun", selection_mode="single-row", hide_index=True, width="stretch",
        selection_default={"selection": {"rows": [default]}} if default is not None else None,
        column_order=[*table.shown_columns(frame, grouped), "transcript"], column_config=table.column_config(grouped),
    )

picked = event.selection.rows if event and event.selection else []
if picked:
    hit = rows.iloc[picked[0]]
    sample, attempt = str(hit["sample_id"]), None if grouped else int(hit["attempt"])
    if (sample, attempt if not grouped else None) != (selected, selected_attempt if not grouped else None):
        st.query_params[state.SAMPLE] = sample
        if attempt is None:
            st.query_params.pop(state.ATTEMPT, None)
        else:
            st.query_params[state.ATTEMPT] = str(attempt)
        target = {state.RUN: entry.run_id, state.SAMPLE: sample, **({state.ATTEMPT: str(attempt)} if attempt is not None else {})}
        try:
            st.switch_page("views/transcript.py", query_params=target)
        except StreamlitAPIException:  # the transcript page is not registered: the link column still works
            st.info("The transcript page is not available here; use the row's Transcript link.")
elif default is not None:  # the user cleared the selection the link carried
    st.query_params.pop(state.SAMPLE, None)
    st.query_params.pop(state.ATTEMPT, None)

table.export_buttons(ordered, entry.run_id)
