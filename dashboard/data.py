"""The caching boundary: the only module that touches `st.cache_*`.

Cached functions take small ids plus a version token (mtime, ETag, job states), never
big objects, so a changed file is re-read and an unchanged one is not.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboard import config, state
from loaders import query
from loaders.base import Loader
from loaders.catalog import Catalog, Entry, build_catalog, expand
from loaders.errors import SourceError
from loaders.registry import resolve
from loaders.schema import LoadWarning, SampleRow, SourceListing, Transcript


@st.cache_resource(show_spinner=False, max_entries=1024)
def loader(leaf: str) -> Loader:
    """One loader per leaf source, shared by all sessions (loaders lock their own state)."""
    return resolve(leaf)


def version(leaf: str) -> str:
    return loader(leaf).version()


@st.cache_data(show_spinner=False, ttl="30s", max_entries=256)
def leaves(source: str) -> tuple[list[str], list[LoadWarning]]:
    """A source's leaf files/folders/URLs (a folder walk), re-checked at most every 30 s."""
    return expand(source)


@st.cache_data(show_spinner=False, max_entries=1024)
def listing(leaf: str, version: str) -> SourceListing:
    return loader(leaf).list_runs()


@st.cache_data(show_spinner=False, max_entries=64)
def _rows(leaf: str, native_run_id: str, version: str) -> list[SampleRow]:
    return loader(leaf).load_samples(native_run_id)


@st.cache_data(show_spinner=False, max_entries=64)
def samples_frame(leaf: str, native_run_id: str, version: str) -> pd.DataFrame:
    return query.rows_frame(_rows(leaf, native_run_id, version))


@st.cache_data(show_spinner=False, max_entries=1024)
def run_summary(leaf: str, native_run_id: str, version: str, public_run_id: str) -> dict[str, Any]:
    entry_run = next(r for r in listing(leaf, version).runs if r.run_id == native_run_id)
    summary = query.summarize(entry_run, _rows(leaf, native_run_id, version))
    return {**summary, "run_id": public_run_id}


@st.cache_data(show_spinner=False, max_entries=256)
def transcript(leaf: str, native_run_id: str, sample_id: str, attempt: int, version: str) -> Transcript:
    return loader(leaf).load_transcript(native_run_id, sample_id, attempt)


def sources() -> list[str]:
    """Configured sources plus those a user added in the sidebar or a link carries."""
    try:
        secrets: dict[str, Any] = dict(st.secrets)
    except (FileNotFoundError, KeyError, OSError):
        secrets = {}
    except Exception:  # noqa: BLE001 - a malformed secrets.toml must not take the app down
        secrets = {}
    base = config.configured_sources(secrets=secrets)
    extra = list(st.session_state.get(state.ADDED_SOURCES, [])) + state.list_param(state.SOURCE)
    return list(dict.fromkeys(base + extra))


def catalog(show_progress: bool = True) -> Catalog:
    """Every run of every source. Leaves load through the cache; a progress bar while many do."""
    all_leaves: list[tuple[str, str]] = []
    problems: dict[str, list[LoadWarning]] = {}
    for source in sources():
        try:
            found, warnings = leaves(source)
        except SourceError as exc:
            problems.setdefault(source, []).append(LoadWarning(code="unreadable", message=exc.detail, file=source))
            continue
        if warnings:
            problems.setdefault(source, []).extend(warnings)
        all_leaves.extend((source, leaf) for leaf in found)
    bar = st.progress(0.0, text="Loading sources…") if show_progress and len(all_leaves) > 3 else None

    def on_progress(i: int, n: int, leaf: str) -> None:
        if bar is not None:
            bar.progress(i / max(n, 1), text=f"Loading {i}/{n}: {leaf.rsplit('/', 1)[-1]}")

    result = build_catalog([leaf for _src, leaf in all_leaves], listing_of=lambda leaf: listing(leaf, version(leaf)),
                           on_progress=on_progress)
    if bar is not None:
        bar.empty()
    for source, warnings in problems.items():
        result.problems.setdefault(source, []).extend(warnings)
    return result


def entry(run_id: str | None) -> Entry | None:
    if not run_id:
        return None
    return catalog(show_progress=False).entries.get(run_id)


def summary_of(e: Entry) -> dict[str, Any]:
    """The run's headline figures; a run whose rows fail to load still shows, with the reason."""
    try:
        return run_summary(e.leaf, e.native_run_id, version(e.leaf), e.run_id)
    except Exception as exc:  # noqa: BLE001 - one broken run must not take the Runs page down
        summary = query.summarize(e.run, [])
        detail = exc.detail if isinstance(exc, SourceError) else f"{type(exc).__name__}: {exc}"
        return {**summary, "status": "unreadable", "warnings": [*summary["warnings"], f"rows could not be loaded: {detail}"]}


def rows_of(e: Entry) -> list[SampleRow]:
    return _rows(e.leaf, e.native_run_id, version(e.leaf))


def frame_of(e: Entry) -> pd.DataFrame:
    return samples_frame(e.leaf, e.native_run_id, version(e.leaf))


def transcript_of(e: Entry, sample_id: str, attempt: int) -> Transcript:
    return transcript(e.leaf, e.native_run_id, sample_id, attempt, version(e.leaf))


def refresh() -> None:
    """Forget what was read; the next rerun re-checks versions and re-reads what changed."""
    leaves.clear()
    listing.clear()
    _rows.clear()
    samples_frame.clear()
    run_summary.clear()
    transcript.clear()
