"""Configured sources -> the runs they hold, with ids unique across all sources.

Shared by the CLI and the dashboard so both agree on what a run id points to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from loaders.base import Loader
from loaders.errors import SourceError
from loaders.registry import resolve
from loaders.schema import LoadWarning, Run, SourceListing
from loaders.sources.folder import FolderLoader


@dataclass(frozen=True)
class Entry:
    """A run as the user addresses it (`run_id`) and where it really lives."""

    run_id: str
    leaf: str  # the file/folder/URL whose loader holds this run
    native_run_id: str  # the id inside that loader
    run: Run


@dataclass
class Catalog:
    entries: dict[str, Entry] = field(default_factory=dict)
    problems: dict[str, list[LoadWarning]] = field(default_factory=dict)  # source -> what failed to load

    def add_listing(self, listing: SourceListing, leaf: str) -> None:
        for run in listing.runs:
            native = public = run.run_id
            n = 2
            while public in self.entries:
                public = f"{native}~{n}"
                n += 1
            shown = run if public == native else run.model_copy(update={"run_id": public})
            self.entries[public] = Entry(public, leaf, native, shown)
        if listing.warnings:
            self.problems.setdefault(leaf, []).extend(listing.warnings)

    def runs(self) -> list[Run]:
        return [e.run for e in self.entries.values()]


def expand(source: str) -> tuple[list[str], list[LoadWarning]]:
    """A source's leaves: itself, or every readable file/folder below a plain folder."""
    loader = resolve(source)
    if isinstance(loader, FolderLoader):
        leaves, warnings = loader.children()
        if not leaves:
            warnings.insert(0, LoadWarning(code="empty_folder", message="no eval logs, traces or results found", file=source))
        return leaves, warnings
    return [source], []


def build_catalog(
    sources: Iterable[str],
    listing_of: Callable[[str], SourceListing] | None = None,
    on_progress: Callable[[int, int, str], None] | None = None,
) -> Catalog:
    """Load every source's run headers; a failing source is recorded, never fatal."""
    listing_of = listing_of or (lambda leaf: resolve(leaf).list_runs())
    catalog = Catalog()
    leaves: list[tuple[str, str]] = []
    for source in sources:
        try:
            found, warnings = expand(source)
        except SourceError as exc:
            catalog.problems.setdefault(source, []).append(LoadWarning(code="unreadable", message=exc.detail, file=source))
            continue
        if warnings:
            catalog.problems.setdefault(source, []).extend(warnings)
        leaves.extend((source, leaf) for leaf in found)
    for i, (source, leaf) in enumerate(leaves):
        if on_progress:
            on_progress(i, len(leaves), leaf)
        try:
            catalog.add_listing(listing_of(leaf), leaf)
        except SourceError as exc:
            catalog.problems.setdefault(source, []).append(
                LoadWarning(code="unreadable", message=exc.detail, file=leaf, line=exc.line))
        except Exception as exc:  # noqa: BLE001 - a loader bug on one file must not hide every other run
            catalog.problems.setdefault(source, []).append(
                LoadWarning(code="loader_error", message=f"could not be read ({type(exc).__name__}: {exc})", file=leaf))
    if on_progress:
        on_progress(len(leaves), len(leaves), "")
    return catalog


def loader_for(entry: Entry) -> Loader:
    return resolve(entry.leaf)
