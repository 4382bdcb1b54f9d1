"""The contract every source kind implements.

Modelled on inspect_ai's recorders: a cheap `handles(source)` check, then three reads
of rising cost: the run headers, one run's sample rows, one transcript.
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from loaders.errors import SourceError
from loaders.patterns import SearchPattern
from loaders.schema import Run, SampleRow, SearchHit, SourceListing, Transcript


class Loader(ABC):
    kind: ClassVar[str]
    label: ClassVar[str]  # human name of the source kind, for the UI

    def __init__(self, source: str) -> None:
        self.source = source

    @classmethod
    @abstractmethod
    def handles(cls, source: str) -> bool:
        """Cheap test (scheme, extension, first bytes); never parses the whole input."""

    def version(self) -> str:
        """A token that changes when the source's content may have changed (cache key)."""
        return path_version(Path(self.source))

    @abstractmethod
    def list_runs(self) -> SourceListing: ...

    @abstractmethod
    def load_samples(self, run_id: str) -> list[SampleRow]: ...

    @abstractmethod
    def load_transcript(self, run_id: str, sample_id: str, attempt: int = 0) -> Transcript: ...

    def load_figures(self, run_id: str, run: Run) -> dict[str, Any]:
        """The run's row-derived headline figures (`query.row_figures`), for summaries of many runs at once.

        `run` is the header the caller already holds (from `list_runs`, so no second listing: for a backend
        that is an HTTP round trip). The default computes the figures from `load_samples`; a kind that keeps
        them on disk (the recorder's parse cache) answers without reading rows, so a restart lists runs at once.
        """
        from loaders import query  # pandas: not imported by every importer of a loader

        return query.row_figures(run, self.load_samples(run_id))

    def search_transcripts(self, run_id: str, pattern: SearchPattern, limit: int = 200, *,
                           per_sample: int = 3) -> list[SearchHit]:
        """Matches in a run's transcripts, in row order: loads one transcript at a time, never all at once.

        Searches the source records (`Transcript.raw`) so every kind finds the same text; a kind that
        can read its records more cheaply (the recorder's byte spans) overrides this.
        """
        hits: list[SearchHit] = []
        for row in self.load_samples(run_id):
            if len(hits) >= limit:
                break
            try:
                transcript = self.load_transcript(run_id, row.sample_id, row.attempt)
            except SourceError:
                continue  # a row without a readable transcript has nothing to search
            records = transcript.raw or (transcript.model_dump(mode="json", exclude={"raw"}),)
            hits.extend(search_records(run_id, row.sample_id, row.attempt, records, pattern, min(per_sample, limit - len(hits))))
        return hits


def path_version(path: Path) -> str:
    """size+mtime of a file, or of every file under a folder (no content is read)."""
    try:
        if path.is_dir():
            parts = []
            for root, _dirs, files in os.walk(path):
                for name in sorted(files):
                    st = os.stat(os.path.join(root, name))
                    parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
            return str(hash("|".join(sorted(parts))))
        st = path.stat()
        return f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        return "missing"


# --- transcript search helpers (shared by every loader's search_transcripts) ----------------------------------

SNIPPET_CONTEXT = 60  # characters shown either side of a match
ENVELOPE_KEYS = frozenset({"run_id", "event_id", "sample_id", "group_id", "created_by", "created_at", "timestamp",
                           "record_type", "type"})  # bookkeeping on every record: matching them finds every sample


def json_strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, text) of every string value in a JSON-like value; keys are not searched, values are."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            yield where, item
        elif isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                if not where and key in ENVELOPE_KEYS:
                    continue
                stack.append((f"{where}.{key}" if where else str(key), child))
        elif isinstance(item, list | tuple):
            for i in range(len(item) - 1, -1, -1):
                stack.append((f"{where}[{i}]", item[i]))


def make_snippet(text: str, match: Any, context: int = SNIPPET_CONTEXT) -> tuple[str, int, int]:
    """(snippet, start, end): the match with `context` characters either side, whitespace flattened to one line."""
    a, b = max(0, match.start() - context), min(len(text), match.end() + context)
    flat = re.sub(r"\s", " ", text[a:b])  # one char for one char: offsets stay valid
    prefix = "…" if a > 0 else ""
    start = len(prefix) + match.start() - a
    return prefix + flat + ("…" if b < len(text) else ""), start, start + match.end() - match.start()


def record_label(record: Any) -> str:
    if isinstance(record, dict):
        kind = record.get("type") or record.get("record_type")
        if isinstance(kind, str):
            return kind
    return "record"


def search_records(run_id: str, sample_id: str, attempt: int, records: Iterable[Any], pattern: SearchPattern,
                   limit: int) -> list[SearchHit]:
    """Up to `limit` non-empty matches of `pattern` in the string values of one sample's records."""
    hits: list[SearchHit] = []
    if limit <= 0:
        return hits
    for record in records:
        label = record_label(record)
        for where, text in json_strings(record):
            for match in pattern.finditer(text):
                if match.end() == match.start():
                    continue
                snippet, start, end = make_snippet(text, match)
                hits.append(SearchHit(run_id=run_id, sample_id=sample_id, attempt=attempt, where=f"{label}: {where}",
                                      snippet=snippet, start=start, end=end))
                if len(hits) >= limit:
                    return hits
    return hits
