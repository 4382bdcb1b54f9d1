"""The caching boundary: the only module that touches `st.cache_*`.

Cached functions take small ids plus a version token (mtime, ETag, job states), never
big objects, so a changed file is re-read and an unchanged one is not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import config, state
from loaders import compare, query
from loaders.base import Loader
from loaders.catalog import Catalog, Entry, build_catalog, expand
from loaders.errors import SourceError
from loaders.patterns import PatternError, UserPattern
from loaders.registry import resolve
from loaders.schema import LoadWarning, Run, SampleRow, SearchHit, SourceListing, Transcript
from loaders.sources.backend import BackendLoader


@st.cache_resource(show_spinner=False, max_entries=1024)
def loader(leaf: str) -> Loader:
    """One loader per leaf source, shared by all sessions (loaders lock their own state).

    A backend gets its key and job ids from `[backends.<name>]` here, so neither is ever a
    cache key, a URL parameter or page state.
    """
    if BackendLoader.handles(leaf):
        conf = config.settings_for(leaf, config.read_secrets())
        if conf is not None:
            return BackendLoader(leaf, api_key=conf.api_key, name=conf.name, job_ids=list(conf.jobs))
    return resolve(leaf)


def version(leaf: str) -> str:
    """The leaf's cache-busting token. A backend's is request-free and must follow the polled job state;
    a file's or folder's is re-checked at most every 2 s (a 20k-trace folder costs ~0.1 s of stat calls)."""
    if leaf.startswith(("http://", "https://")):
        return loader(leaf).version()
    return _path_version(leaf)


@st.cache_data(show_spinner=False, ttl="2s", max_entries=4096)
def _path_version(leaf: str) -> str:
    return loader(leaf).version()


@st.cache_data(show_spinner=False, ttl="30s", max_entries=256)
def leaves(source: str) -> tuple[list[str], list[LoadWarning]]:
    """A source's leaf files/folders/URLs (a folder walk), re-checked at most every 30 s."""
    return expand(source)


@st.cache_data(show_spinner=False, max_entries=1024)
def listing(leaf: str, version: str) -> SourceListing:
    return loader(leaf).list_runs()


@st.cache_resource(show_spinner=False, max_entries=64)
def _rows(leaf: str, native_run_id: str, version: str) -> list[SampleRow]:
    """Shared, not copied: cache_data would pickle 100k frozen rows in and out on every rerun. Never mutate it."""
    return loader(leaf).load_samples(native_run_id)


@st.cache_data(show_spinner=False, max_entries=64)
def samples_frame(leaf: str, native_run_id: str, version: str) -> pd.DataFrame:
    return query.rows_frame(_rows(leaf, native_run_id, version))


@st.cache_data(show_spinner=False, max_entries=1024)
def run_summary(leaf: str, native_run_id: str, version: str, public_run_id: str) -> dict[str, Any]:
    """Rows are not loaded for this when the loader keeps the figures (a restart lists a 1 GB log's run at once)."""
    entry_run = next(r for r in listing(leaf, version).runs if r.run_id == native_run_id)
    summary = query.summarize(entry_run, figures=loader(leaf).load_figures(native_run_id, entry_run))
    return {**summary, "run_id": public_run_id}


@st.cache_data(show_spinner=False, max_entries=256)
def transcript(leaf: str, native_run_id: str, sample_id: str, attempt: int, version: str) -> Transcript:
    return loader(leaf).load_transcript(native_run_id, sample_id, attempt)


@st.cache_data(show_spinner="Searching transcripts…", max_entries=64)
def _search(leaf: str, native_run_id: str, pattern: str, limit: int, version: str) -> list[SearchHit]:
    """A user's pattern runs under a time budget: PatternTimeout (not cached) instead of a thread held for hours."""
    return loader(leaf).search_transcripts(native_run_id, UserPattern(pattern, is_regex=True), limit)


def sources() -> list[str]:
    """Configured sources plus those a user added in the sidebar or a link carries (inside the allowed roots)."""
    return _sources()[0]


def _sources() -> tuple[list[str], dict[str, list[LoadWarning]]]:
    base = config.configured_sources(secrets=config.read_secrets())
    roots = config.allowed_roots(base)
    upload_dir = st.session_state.get("sources.upload_dir")
    uploads = [Path(upload_dir).resolve()] if upload_dir else []
    kept, refused = list(base), {}
    for source in list(st.session_state.get(state.ADDED_SOURCES, [])) + state.list_param(state.SOURCE):
        if config.is_allowed_source(source, roots, uploads):
            kept.append(source)
        else:
            refused[source] = [LoadWarning(code="not_allowed", file=source, message=(
                "not opened: outside the folders this dashboard serves (set EVALDASH_ALLOWED_ROOTS to widen them)"))]
    return list(dict.fromkeys(kept)), refused


def catalog(show_progress: bool = True) -> Catalog:
    """Every run of every source. Leaves load through the cache; a progress bar while many do."""
    all_leaves: list[tuple[str, str]] = []
    chosen, problems = _sources()
    for source in chosen:
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


def search_pattern(text: str, regex: bool) -> str:
    """The pattern a search box means; raises `PatternError` for a bad regex (the view shows it)."""
    return UserPattern(text, is_regex=regex).pattern


def search_of(e: Entry, text: str, regex: bool = False, limit: int = 200) -> list[SearchHit]:
    """Case-insensitive search of a run's transcripts; hits carry the public run id."""
    hits = _search(e.leaf, e.native_run_id, search_pattern(text, regex), limit, version(e.leaf))
    return [h if h.run_id == e.run_id else h.model_copy(update={"run_id": e.run_id}) for h in hits]


# (public run id, leaf, native run id, version) per run: small ids, never rows or frames
RunKey = tuple[str, str, str, str]


@st.cache_resource(show_spinner="Comparing runs…", max_entries=32)
def _comparison(runs: tuple[RunKey, ...], baseline: str, alpha: float, id_map: str) -> dict[str, Any]:
    """Shared, not copied (per-seed lists of 100k rows would be unpickled on every rerun); views only read it."""
    loaded = []
    for public, leaf, native, ver in runs:
        run = next(r for r in listing(leaf, ver).runs if r.run_id == native)
        rows = _rows(leaf, native, ver)
        if public != native:  # same rename the catalog made, so flips and headlines name the public id
            run = run.model_copy(update={"run_id": public})
            rows = [r.model_copy(update={"run_id": public}) for r in rows]
        loaded.append((run, rows))
    return compare.compare_many(loaded, baseline=baseline, alpha=alpha, id_map=id_map)


def comparison(entries: list[Entry], baseline: str, alpha: float, id_map: str) -> dict[str, Any]:
    """`compare.compare_many` of these runs (each against `baseline`), cached by ids + version tokens."""
    return _comparison(_run_keys(entries), baseline, alpha, id_map)


def _run_keys(entries: list[Entry]) -> tuple[RunKey, ...]:
    return tuple((e.run_id, e.leaf, e.native_run_id, version(e.leaf)) for e in entries)


@st.cache_resource(show_spinner=False, max_entries=32)
def _comparison_frames(runs: tuple[RunKey, ...], baseline: str, alpha: float, id_map: str) -> dict[str, dict[str, pd.DataFrame]]:
    """The flips table and the per-seed points of each comparison, built once (100k pairs cost ~0.3 s)."""
    result = _comparison(runs, baseline, alpha, id_map)
    return {c["run_b"]["run_id"]: {"flips": compare.flips_frame(c), "points": compare.seed_points(c)} for c in result["comparisons"]}


def comparison_frames(entries: list[Entry], baseline: str, alpha: float, id_map: str, run_b: str) -> dict[str, pd.DataFrame]:
    """Shared, not copied: views filter or slice these frames and never change them in place."""
    return _comparison_frames(_run_keys(entries), baseline, alpha, id_map)[run_b]


@st.cache_data(show_spinner="Computing run statistics…", max_entries=64)
def run_stats(leaf: str, native_run_id: str, version: str) -> dict[str, Any]:
    """`query.run_statistics` of one run (headline + CI, pass@k, usage, report check): a small dict."""
    entry_run = next(r for r in listing(leaf, version).runs if r.run_id == native_run_id)
    return query.run_statistics(entry_run, _rows(leaf, native_run_id, version))


@st.cache_data(show_spinner="Building the per-seed table…", max_entries=32)
def seed_frame(leaf: str, native_run_id: str, version: str, grouped: bool) -> pd.DataFrame:
    """`query.seed_table` (one row per seed x attempt, or per seed); filtering and paging happen per view."""
    return query.seed_table(_rows(leaf, native_run_id, version), grouped)


def stats_of(e: Entry) -> dict[str, Any]:
    """The run summary page's figures; raises SourceError when the rows cannot be read."""
    return run_stats(e.leaf, e.native_run_id, version(e.leaf))


def seeds_of(e: Entry, grouped: bool) -> pd.DataFrame:
    return seed_frame(e.leaf, e.native_run_id, version(e.leaf), grouped)


@st.cache_resource(show_spinner="Filtering…", max_entries=8)  # each a part of a seed table: few, for paging reuse
def _filtered_seeds(leaf: str, native_run_id: str, version: str, grouped: bool, status: str, smin: float | None,
                    smax: float | None, search: str | None, regex: bool) -> pd.DataFrame | PatternError:
    """Shared, not copied: never mutate it. A failed pattern is kept as well, so a slow regex in a pasted link
    spends its time budget once, not again on every rerun of every viewer."""
    try:
        return query.filter_rows(seed_frame(leaf, native_run_id, version, grouped), status, smin, smax, search, regex)
    except PatternError as exc:
        return exc


def filtered_seeds_of(e: Entry, grouped: bool, status: str, smin: float | None, smax: float | None, search: str | None,
                      regex: bool) -> pd.DataFrame:
    """`query.filter_rows` of the per-seed table, kept per filter (paging and sorting reruns reuse it).

    Raises `PatternError` for a regex that is invalid or ran out of its time budget; ValueError for a bad status.
    """
    if status == "all" and smin is None and smax is None and not search:
        return seeds_of(e, grouped)
    found = _filtered_seeds(e.leaf, e.native_run_id, version(e.leaf), grouped, status, smin, smax, search, regex)
    if isinstance(found, PatternError):
        raise found
    return found


def live_run(e: Entry) -> Run:
    """The current header of a running backend job: one status call, deliberately uncached (this is the poll)."""
    source = loader(e.leaf)
    if isinstance(source, BackendLoader):
        fresh = source.job_status(e.native_run_id)
        return fresh if fresh.run_id == e.run_id else fresh.model_copy(update={"run_id": e.run_id})
    return e.run


def refresh() -> None:
    """Forget what was read; the next rerun re-checks versions and re-reads what changed."""
    leaves.clear()
    _path_version.clear()
    listing.clear()
    _rows.clear()
    samples_frame.clear()
    run_summary.clear()
    transcript.clear()
    _search.clear()
    _comparison.clear()
    _comparison_frames.clear()
    run_stats.clear()
    seed_frame.clear()
