"""The per-seed table: sort and page a filtered `seed_table` frame, add links, export.

Filtering is `query.filter_rows`; here only what one page view needs: a whole-table
sort (the grid's own header sort would reorder just the visible page), a slice, and
transcript links for the rows on that page. Everything is vectorised, so a 100k-row
run costs a few tens of milliseconds per rerun, and only one page is sent to the browser.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from dashboard import state

NATURAL = "sample_id"  # the frame's own order: numeric-aware sample ids (dev.9 before dev.10), then attempt
PAGE_SIZES = [25, 50, 100, 250]
DEFAULT_PAGE_SIZE = 50

ATTEMPT_COLUMNS = [
    "sample_id", "attempt", "status", "score", "correct", "reward_mean", "outcome_score", "events_score", "verifier_score",
    "latency_ms", "tokens_total", "cost_usd", "finish_reason", "error", "n_messages", "flaky",
]
GROUPED_COLUMNS = [
    "sample_id", "k_of_n", "status", "n_attempts", "score", "score_min", "score_max", "reward_mean", "outcome_score",
    "events_score", "verifier_score", "latency_ms", "tokens_total", "cost_usd", "finish_reason", "n_errors", "error",
    "n_messages",
]
ALWAYS_SHOWN = {"sample_id", "attempt", "k_of_n", "status", "score", "correct", "error"}
SORT_BY = {"k_of_n": ["k_passed", "n_graded"]}  # "3/4" sorts by counts, not as text


def columns(grouped: bool) -> list[str]:
    """Shown columns (and the sort choices) of either mode."""
    return GROUPED_COLUMNS if grouped else ATTEMPT_COLUMNS


def shown_columns(frame: pd.DataFrame, grouped: bool) -> list[str]:
    """The mode's columns less those no row of this run has (a nanoeval run has no rewards): less noise.

    Decided on the whole run, not the filtered view, so columns do not come and go with a filter.
    """
    return [c for c in columns(grouped) if c in ALWAYS_SHOWN or (c in frame.columns and frame[c].notna().any())]


def sort_frame(frame: pd.DataFrame, sort: str | None, desc: bool) -> pd.DataFrame:
    """The whole filtered table in the chosen order; missing values always last; ties keep id order."""
    if not sort or sort == NATURAL or sort not in frame:
        return frame.iloc[::-1] if desc else frame
    by = SORT_BY.get(sort, [sort])
    return frame.sort_values(by, ascending=not desc, kind="stable", na_position="last")


def page_count(n_rows: int, size: int) -> int:
    return max(1, -(-n_rows // size))


def page_slice(frame: pd.DataFrame, page: int, size: int) -> pd.DataFrame:
    """Rows of 1-based `page`; positions are reset so a grid selection indexes this slice."""
    start = (max(page, 1) - 1) * size
    return frame.iloc[start:start + size].reset_index(drop=True)


def transcript_url(run_id: str, sample_id: str, attempt: int | None = None) -> str:
    """A relative deep link to one transcript (`/transcript?run=&sample=&attempt=`), built by us."""
    params = {state.RUN: run_id, state.SAMPLE: sample_id, **({state.ATTEMPT: str(attempt)} if attempt is not None else {})}
    return "/transcript?" + urlencode(params)


def with_links(page: pd.DataFrame, run_id: str, grouped: bool) -> pd.DataFrame:
    """The page's rows with a `transcript` link each (grouped rows open the seed's first attempt)."""
    attempts = [None] * len(page) if grouped else page["attempt"].tolist()
    return page.assign(transcript=[transcript_url(run_id, s, a) for s, a in zip(page["sample_id"], attempts, strict=True)])


def position_of(page: pd.DataFrame, sample_id: str | None, attempt: int | None, grouped: bool) -> int | None:
    """Where the URL's selected row sits on this page (None when it is elsewhere or unset)."""
    if not sample_id:
        return None
    hit = page["sample_id"] == sample_id
    if not grouped and attempt is not None:
        hit &= page["attempt"] == attempt
    found = hit[hit].index
    return int(found[0]) if len(found) else None


def table_key(*view: Any) -> str:
    """A grid key per view (run, filters, sort, page): a selection belongs to the rows it was made on,
    so a new page or filter starts without a stale one."""
    return "seeds.table." + hashlib.sha1(json.dumps(view, default=str).encode()).hexdigest()[:12]


def export_frame(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=[c for c in ("flags",) if c in frame])


def export_buttons(frame: pd.DataFrame, run_id: str) -> None:
    """CSV and JSON of every filtered row (all pages), built only when clicked, without a rerun."""
    stem = f"{run_id}-seeds"
    cols = st.columns(2)
    cols[0].download_button("Export CSV", data=lambda: export_frame(frame).to_csv(index=False), file_name=f"{stem}.csv",
                            mime="text/csv", on_click="ignore", icon=":material/download:", key="seeds.export_csv")
    cols[1].download_button("Export JSON", data=lambda: export_frame(frame).to_json(orient="records", force_ascii=False),
                            file_name=f"{stem}.json", mime="application/json", on_click="ignore",
                            icon=":material/download:", key="seeds.export_json")


def column_config(grouped: bool) -> dict[str, Any]:
    """Per-seed grid columns; `transcript` holds relative links we build."""
    cc = st.column_config
    common = {
        "sample_id": cc.TextColumn("Sample", pinned=True),
        "status": cc.TextColumn("Outcome"),
        "score": cc.NumberColumn("Score" if not grouped else "Mean score", format="%.3f"),
        "reward_mean": cc.NumberColumn("Reward mean", format="%.3f"),
        "outcome_score": cc.NumberColumn("Outcome score", format="%.3f"),
        "events_score": cc.NumberColumn("Events score", format="%.3f"),
        "verifier_score": cc.NumberColumn("Verifier score", format="%.3f"),
        "latency_ms": cc.NumberColumn("Latency (ms)" if not grouped else "Latency Σ (ms)", format="%.0f"),
        "tokens_total": cc.NumberColumn("Tokens" if not grouped else "Tokens Σ", help="Empty = unknown"),
        "cost_usd": cc.NumberColumn("Cost ($)" if not grouped else "Cost Σ ($)", format="%.4f"),
        "finish_reason": cc.TextColumn("Finish reason"),
        "error": cc.TextColumn("Error", width="large"),
        "n_messages": cc.NumberColumn("Messages"),
        "transcript": cc.LinkColumn("Transcript", display_text="open"),
    }
    if grouped:
        return {**common,
                "k_of_n": cc.TextColumn("Passed", help="k of n graded attempts passed"),
                "n_attempts": cc.NumberColumn("Attempts"),
                "score_min": cc.NumberColumn("Min score", format="%.3f"),
                "score_max": cc.NumberColumn("Max score", format="%.3f"),
                "n_errors": cc.NumberColumn("Errors")}
    return {**common,
            "attempt": cc.NumberColumn("Attempt"),
            "correct": cc.CheckboxColumn("Correct"),
            "flaky": cc.CheckboxColumn("Flaky", help="This sample's attempts disagree")}


def flag(label: str, param: str, key: str, *, on_change: Any = None, help: str | None = None) -> bool:
    """A toggle mirrored to `?param=1` by hand: bound widgets write booleans as `true`/`false`,
    and links use `1`; read either, write `1`, drop the parameter when off."""
    if key not in st.session_state:
        st.session_state[key] = state.bool_param(param)
    value = bool(st.toggle(label, key=key, on_change=on_change, help=help))
    if value and st.query_params.get(param) != "1":
        st.query_params[param] = "1"
    elif not value and param in st.query_params:
        del st.query_params[param]
    return value
