"""Recorder logs (openai/evals LocalRecorder, nanoeval JsonRecorder): one JSONL file.

The first scan indexes the file: run headers, rows, and the byte ranges of each
sample's records, so opening a transcript later reads only those bytes.
"""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from loaders import parsed_cache
from loaders.base import Loader, search_records
from loaders.errors import SourceError, UnknownRun, UnknownSample
from loaders.formats import evals_log, nanoeval_log
from loaders.formats.index import RunIndex, ScanContext
from loaders.jsonl import decode_line, first_records, read_spans
from loaders.patterns import SearchPattern
from loaders.registry import register
from loaders.schema import LoadWarning, Run, SampleRow, SearchHit, SourceListing, Transcript

SUFFIXES = (".jsonl", ".log", ".ndjson")
# Regex features whose result depends on what surrounds a JSON string: the raw-line prefilter is off for them.
_CONTEXT_SENSITIVE = re.compile(r"\^|\$|\\[AZz]|\(\?<?[=!]")
log = logging.getLogger(__name__)
DIALECTS: dict[str, ModuleType] = {"openai-evals": evals_log, "nanoeval": nanoeval_log}


def detect_dialect(path: Path) -> str | None:
    records = first_records(path)
    for name, module in DIALECTS.items():
        if module.detect(records):
            return name
    return None


@register
class RecorderLoader(Loader):
    kind = "recorder"
    label = "Recorder log"

    def __init__(self, source: str) -> None:
        super().__init__(source)
        self.path = Path(source)
        self._lock = threading.Lock()
        self._cached: tuple[str, list[RunIndex], list[LoadWarning]] | None = None
        self._cache_damaged = False  # its parse-cache entry failed once: parse the log itself from now on

    @classmethod
    def handles(cls, source: str) -> bool:
        path = Path(source)
        return path.is_file() and path.suffix.lower() in SUFFIXES and detect_dialect(path) is not None

    def _scan(self) -> tuple[list[RunIndex], list[LoadWarning]]:
        version = self.version()
        with self._lock:
            if self._cached and self._cached[0] == version:
                return self._cached[1], self._cached[2]
            if not self.path.is_file():
                raise SourceError(self.source, "no such file")
            dialect = detect_dialect(self.path)
            if dialect is None:
                raise SourceError(self.source, "not a recorder log: no spec, event or record_type line in the first 20 records")
            cached = None if self._cache_damaged else parsed_cache.load(self.path, self.source)  # a restart: no re-parse
            if cached is not None:
                self._cached = (version, cached[0], cached[1])
                return cached[0], list(cached[1])
            ctx = ScanContext(path=str(self.path), source=self.source)
            try:
                before = self.path.stat()
                runs = DIALECTS[dialect].scan_file(self.path, ctx)
                after = self.path.stat()
            except OSError as exc:
                raise SourceError(self.source, f"cannot read: {exc.strerror or exc}") from exc
            if (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns):  # not kept while being written
                parsed_cache.save(self.path, self.source, before, runs, ctx.warnings)
            self._cached = (version, runs, list(ctx.warnings))
            return runs, list(ctx.warnings)

    def list_runs(self) -> SourceListing:
        runs, warnings = self._scan()
        return SourceListing(source=self.source, kind=self.kind, runs=tuple(r.run for r in runs),
                             warnings=tuple(warnings) if not runs else ())

    def _run(self, run_id: str) -> RunIndex:
        for index in self._scan()[0]:
            if index.run.run_id == run_id:
                return index
        raise UnknownRun(self.source, f"no run {run_id!r} in this log")

    def _rows(self, run_id: str) -> list[SampleRow]:
        """The run's rows; read from the parse cache on first use, and from the log if that entry turns out damaged."""
        try:
            return self._run(run_id).rows
        except parsed_cache.CacheDamaged as exc:
            log.warning("evaldash cache: %s; parsing %s again", exc, self.path)
            with self._lock:
                self._cache_damaged, self._cached = True, None
            return self._run(run_id).rows

    def load_samples(self, run_id: str) -> list[SampleRow]:
        return list(self._rows(run_id))

    def load_figures(self, run_id: str, run: Run) -> dict[str, Any]:
        """Kept with the parse cache, so listing a big log's runs after a restart reads no rows (`run` is not needed)."""
        index = self._run(run_id)
        if index.figures is None:
            from loaders import query

            index.figures = query.row_figures(index.run, self._rows(run_id))
        return index.figures

    def load_transcript(self, run_id: str, sample_id: str, attempt: int = 0) -> Transcript:
        index = self._run(run_id)
        spans = index.spans.get((sample_id, attempt))
        if spans is None:
            raise UnknownSample(self.source, f"no sample {sample_id!r} attempt {attempt} in run {run_id}")
        records = read_spans(self.path, spans)
        return DIALECTS[index.run.dialect or "openai-evals"].build_transcript(run_id, sample_id, attempt, records)

    def search_transcripts(self, run_id: str, pattern: SearchPattern, limit: int = 200, *,
                           per_sample: int = 3) -> list[SearchHit]:
        """Grep each sample's byte spans, in row order like the default; parse only lines that can match.

        A line without backslash escapes holds its strings verbatim, so if the pattern misses
        the raw line it misses every string in it and the line is skipped unparsed. Hits come
        from the decoded strings, so snippets show text, not JSON escapes. Nothing else of the
        file is read and no transcript model is built.
        """
        index = self._run(run_id)
        rows = self._rows(run_id)
        prefilter = _CONTEXT_SENSITIVE.search(pattern.pattern) is None
        hits: list[SearchHit] = []
        with self.path.open("rb") as fh:
            for row in rows:
                if len(hits) >= limit:
                    break
                found: list[SearchHit] = []
                for offset, length in sorted(index.spans.get((row.sample_id, row.attempt), ())):
                    fh.seek(offset)
                    raw = fh.read(length)
                    if prefilter and b"\\" not in raw and not pattern.search(raw.decode("utf-8", errors="replace")):
                        continue
                    record, _problem = decode_line(raw.strip())
                    if isinstance(record, dict):
                        found += search_records(index.run.run_id, row.sample_id, row.attempt, [record], pattern,
                                                min(per_sample, limit - len(hits)) - len(found))
                    if len(found) >= min(per_sample, limit - len(hits)):
                        break
                hits += found
        return hits
