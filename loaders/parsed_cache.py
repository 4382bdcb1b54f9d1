"""On-disk cache of parsed recorder logs, so a restart re-reads a few MB of Parquet instead of a GB of JSONL.

One entry per (absolute path, configured source, size, mtime_ns, parser version, row schema): a header of
run headers and warnings as JSON in the Parquet metadata, the rows as columns, and the transcript byte spans
in a second file read only when a transcript is opened. The key is stored inside and re-checked on load, so
a stale, foreign or corrupt entry is ignored (and rebuilt by the caller), never trusted blindly. Only Arrow
and JSON are read back: nothing is unpickled. Folder: `EVALDASH_CACHE_DIR` (default `~/.cache/evaldash`;
empty, `0` or `off` disables it), capped at `EVALDASH_CACHE_MAX_MB` (default 4096), least recently used first.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import suppress
from datetime import datetime, timezone
from functools import cache, partial
from itertools import accumulate, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from loaders.formats.index import RunIndex, Span, TranscriptKey, key_sharing_dict
from loaders.jsonl import gc_paused
from loaders.schema import SCHEMA_VERSION, LoadWarning, Run, SampleRow

PARSER_VERSION = "recorder-1"  # bump whenever a dialect scanner's output (runs, rows, warnings, spans) changes
ENV = "EVALDASH_CACHE_DIR"
MAX_ENV = "EVALDASH_CACHE_MAX_MB"
_OFF = {"", "0", "off", "none", "false", "no"}
log = logging.getLogger(__name__)

_SCALARS: dict[str, pa.DataType] = {
    "run_id": pa.string(), "sample_id": pa.string(), "attempt": pa.int64(), "score": pa.float64(), "correct": pa.bool_(),
    "correct_rule": pa.string(), "reward_mean": pa.float64(), "outcome_score": pa.float64(), "events_score": pa.float64(),
    "verifier_score": pa.float64(), "latency_ms": pa.float64(), "tokens_in": pa.int64(), "tokens_out": pa.int64(),
    "tokens_total": pa.int64(), "tokens_computed": pa.bool_(), "cost_usd": pa.float64(), "error": pa.string(),
    "error_kind": pa.string(), "finish_reason": pa.string(), "n_messages": pa.int64(), "grader_log": pa.string(),
    "attribution": pa.string(), "has_transcript": pa.bool_(),
}
_SPECIAL = ("sort_key", "flags", "metrics")
_ROW_FIELDS = tuple(SampleRow.model_fields)
_SUPPORTED = set(_ROW_FIELDS) == set(_SCALARS) | set(_SPECIAL)  # a new SampleRow field turns the cache off, not wrong
_ALL_FIELDS = set(_ROW_FIELDS)


def _run_of(data: dict[str, Any]) -> Run:
    """A Run back from JSON, with plain `datetime.timezone`s as the scanners make them (pydantic gives its own TzInfo)."""
    run = Run.model_validate(data)
    fixed = {name: value.replace(tzinfo=timezone(value.utcoffset()))
             for name in ("created_at", "started_at", "completed_at")
             if isinstance(value := getattr(run, name), datetime) and value.utcoffset() is not None}
    return run.model_copy(update=fixed) if fixed else run


def cache_dir() -> Path | None:
    value = os.environ.get(ENV)
    if value is None:
        return Path.home() / ".cache" / "evaldash"
    if value.strip().lower() in _OFF:
        return None
    return Path(value).expanduser()


def _identity(path: Path, source: str, st: os.stat_result) -> dict[str, Any]:
    return {"path": str(path.resolve()), "source": source, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "parser": PARSER_VERSION, "schema": SCHEMA_VERSION, "row_fields": list(_ROW_FIELDS)}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:24]


def _files(folder: Path, identity: dict[str, Any]) -> tuple[Path, Path]:
    """`<path digest>-<version digest>.*`: older versions of the same log share the prefix and are swept on save."""
    key = f"{_digest([identity['path'], identity['source']])}-{_digest(identity)}"
    return folder / f"{key}.rows.parquet", folder / f"{key}.spans.parquet"


def max_bytes() -> int:
    """The cache folder's size cap (`EVALDASH_CACHE_MAX_MB`, default 4096): least recently used entries go first."""
    try:
        return int(float(os.environ.get(MAX_ENV, "4096")) * (1 << 20))
    except ValueError:
        return 4096 << 20


def _trim(folder: Path, keep: Path) -> None:
    """Delete least recently used entries (a hit touches its rows file) until the folder fits the cap.

    The entry just written is never deleted, so a log larger than the cap still restarts fast until the next one.
    """
    entries: list[tuple[float, int, list[Path]]] = []
    for rows_file in folder.glob("*.rows.parquet"):
        files = [rows_file, rows_file.with_name(rows_file.name.replace(".rows.", ".spans."))]
        try:
            entries.append((rows_file.stat().st_mtime, sum(f.stat().st_size for f in files if f.exists()), files))
        except OSError:
            continue  # another process swept it meanwhile
    total, cap = sum(size for _t, size, _f in entries), max_bytes()
    for _used, size, files in sorted(entries, key=lambda e: e[0]):
        if total <= cap:
            break
        if files[0] == keep:
            continue
        for f in files:
            f.unlink(missing_ok=True)
        total -= size


def _sweep(folder: Path, keep: Path) -> None:
    """Drop entries of earlier versions of the same log, so a growing log does not fill the disk."""
    prefix = keep.name.split("-", 1)[0] + "-"
    mine = keep.name.split(".", 1)[0]
    for old in folder.glob(f"{prefix}*.parquet"):
        if old.name.split(".", 1)[0] != mine:
            old.unlink(missing_ok=True)


# --- rows <-> columns ------------------------------------------------------------------------------------------------


def _floats(values: list[Any]) -> pa.Array:
    """A float column through numpy (pyarrow converts Python floats ~50x slower); NaN stays NaN, None becomes null.

    Anything but a float or None (an int, say) raises, so the entry is not written rather than read back changed.
    """
    objects = np.array(values, dtype=object)
    mask = np.equal(objects, None)
    if any(type(v) is not float for v in objects[~mask]):
        raise ValueError("a float column holds a non-float value")
    return pa.array(np.where(mask, 0.0, objects).astype(np.float64), mask=mask)


def _row_table(rows: list[SampleRow], run_no: list[int]) -> pa.Table:
    """Rows to columns: each row's values fetched once, then transposed (rows scattered in memory are slow to revisit)."""
    columns = dict(zip(_ROW_FIELDS, map(list, zip(*map(itemgetter(*_ROW_FIELDS), map(vars, rows)), strict=True)), strict=True)) \
        if rows else {name: [] for name in _ROW_FIELDS}
    cols: dict[str, pa.Array] = {"run_no": pa.array(run_no, pa.int32())}
    for name, kind in _SCALARS.items():
        cols[name] = _floats(columns[name]) if kind == pa.float64() else pa.array(columns[name], kind)
    keys = columns["sort_key"]
    cols["sort_key_n"] = pa.array([k[0] for k in keys], pa.int64())
    cols["sort_key_s"] = pa.array([k[1] for k in keys], pa.string())
    cols["flags"] = pa.array(columns["flags"], pa.list_(pa.string()))
    # Metrics are arbitrary JSON from the log: stdlib json keeps NaN/Infinity and big integers exactly.
    cols["metrics"] = pa.array([json.dumps(m) if m else None for m in columns["metrics"]], pa.string())
    return pa.table(cols)


_new_row = SampleRow.__new__
_set = object.__setattr__


def _pylist(column: pa.ChunkedArray) -> list[Any]:
    """A column as Python values; the common all-null and null-free numeric columns skip to_pylist's per-value cost."""
    n = len(column)
    if column.null_count == n:
        return [None] * n
    if column.null_count == 0 and (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
                                   or pa.types.is_boolean(column.type)):
        return column.to_numpy().tolist()
    return column.to_pylist()


def _consume(iterator: Iterator[Any]) -> None:
    """Run a `map` to its end in C (the fastest way to apply a C function to 100k objects)."""
    deque(iterator, maxlen=0)


def _rows_of(table: pa.Table) -> tuple[list[int], list[SampleRow]]:
    """(run number of each row, rows) back from columns, with no Python-level loop over the rows.

    A column that holds one value on every row (a run id, all-null scores, ...) goes into a template dict; each
    row's dict is a copy of that template with its own varying values set, column by column in C loops.
    Only immutable values are shared between rows; `metrics` dicts are always each row's own.
    """
    n = table.num_rows
    if n == 0:
        return [], []
    template: dict[str, Any] = {}
    varying_names: list[str] = []
    varying_cols: list[list[Any]] = []
    sample_ids = table.column("sample_id").to_pylist()
    for name in _ROW_FIELDS:
        if name == "sample_id":
            values = sample_ids
        elif name == "sort_key":
            keys_s = table.column("sort_key_s")
            # numeric_sort_key keeps the sample id as its second part: share those strings instead of new copies
            same = keys_s.null_count == 0 and table.column("sample_id").equals(keys_s)
            values = list(zip(table.column("sort_key_n").to_pylist(), sample_ids if same else keys_s.to_pylist(), strict=True))
        elif name == "flags":
            flags = table.column("flags")
            values = [()] * n if flags.null_count == 0 and pc.sum(pc.list_value_length(flags)).as_py() == 0 \
                else [tuple(f) for f in flags.to_pylist()]
        elif name == "metrics":
            values = [json.loads(m) if m is not None else {} for m in table.column("metrics").to_pylist()]
        else:
            values = _pylist(table.column(name))
        template[name] = None
        first = values[0]
        if name != "metrics" and (first is None or type(first) in (str, int, bool, tuple)) \
                and values.count(first) == n:
            template[name] = first  # the same immutable value on every row (floats never: -0.0 == 0.0)
        else:
            varying_names.append(name)
            varying_cols.append(values)
    template = key_sharing_dict(template)  # rows ~300 bytes each instead of ~830, as built by a scan
    dicts = list(map(dict.copy, repeat(template, n)))  # a copy of a same-shaped dict is a memcpy, not 26 inserts
    for name, values in zip(varying_names, varying_cols, strict=True):
        _consume(map(dict.__setitem__, dicts, repeat(name), values))
    rows: list[SampleRow] = list(map(_new_row, repeat(SampleRow, n)))
    _consume(map(_set, rows, repeat("__dict__"), dicts))
    _consume(map(_set, rows, repeat("__pydantic_fields_set__"), repeat(_ALL_FIELDS)))  # shared; pydantic copies it before a change
    _consume(map(_set, rows, repeat("__pydantic_extra__"), repeat(None)))
    _consume(map(_set, rows, repeat("__pydantic_private__"), repeat(None)))
    return table.column("run_no").to_pylist(), rows


# --- rows and spans, read lazily -------------------------------------------------------------------------------------


class CacheDamaged(Exception):
    """A cache entry whose header was fine turned out unreadable when its rows were read: the caller re-parses."""


@cache
def _figures_version() -> str:
    """Stored figures are query.row_figures output: an edit of query.py makes them stale (recomputed, never trusted)."""
    from loaders import query  # pandas: imported when a cache is used, not by every importer of the loaders

    return hashlib.sha256(Path(query.__file__).read_bytes()).hexdigest()[:16]


class _StoredRows:
    """The rows of every run of one cache entry, read together on the first request (one Parquet read, not one per run)."""

    def __init__(self, path: Path, counts: list[int], identity: dict[str, Any]) -> None:
        self._path, self._counts, self._identity = path, counts, identity
        self._per_run: list[list[SampleRow]] | None = None
        self._lock = threading.Lock()

    def rows_of(self, run_no: int) -> list[SampleRow]:
        with self._lock:
            if self._per_run is None:
                self._per_run = self._read()
            return self._per_run[run_no]

    def _read(self) -> list[list[SampleRow]]:
        try:
            with pq.ParquetFile(self._path) as pf:  # not pq.read_table: its dataset layer imports pandas
                header = json.loads((pf.schema_arrow.metadata or {})[b"evaldash"])
                if header.get("identity") != self._identity or header.get("n_rows") != self._counts:
                    raise ValueError("the entry was replaced since its header was read")
                table = pf.read()
            with gc_paused():
                run_nos, rows = _rows_of(table)
            if run_nos != [i for i, k in enumerate(self._counts) for _ in range(k)]:  # save writes each run's rows together
                raise ValueError("rows are not grouped by run as written")
        except Exception as exc:  # whatever broke (file gone, bad pages, wrong shape), the caller re-parses the log
            raise CacheDamaged(f"{self._path.name}: {exc}") from exc
        ends = list(accumulate(self._counts))
        return [rows[end - k:end] for k, end in zip(self._counts, ends, strict=True)]


class LazySpans:
    """The `RunIndex.spans` mapping of a cached run: the spans file is read on the first transcript opened."""

    def __init__(self, path: Path, run_no: int, tag: str) -> None:
        self._path, self._run_no, self._tag = path, run_no, tag
        self._spans: dict[TranscriptKey, list[Span]] | None = None
        self._lock = threading.Lock()

    def _load(self) -> dict[TranscriptKey, list[Span]]:
        with self._lock:
            if self._spans is None:
                spans: dict[TranscriptKey, list[Span]] = {}
                try:
                    if (pq.read_schema(self._path).metadata or {}).get(b"evaldash_key", b"").decode() != self._tag:
                        raise ValueError("spans file does not belong to this entry")
                    table = pq.read_table(self._path, filters=[("run_no", "=", self._run_no)])
                    cols = [table.column(n).to_pylist() for n in ("sample_id", "attempt", "offset", "length")]
                    for sample_id, attempt, offset, length in zip(*cols, strict=True):
                        spans.setdefault((sample_id, attempt), []).append((offset, length))
                except Exception as exc:  # noqa: BLE001 - a damaged spans file means "no transcripts", never a crash
                    log.warning("evaldash cache: spans unreadable (%s); transcripts of this run cannot open until a re-parse", exc)
                self._spans = spans
            return self._spans

    def get(self, key: TranscriptKey, default: Any = None) -> Any:
        return self._load().get(key, default)

    def __getitem__(self, key: TranscriptKey) -> list[Span]:
        return self._load()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._load()

    def __iter__(self) -> Iterator[TranscriptKey]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def items(self) -> Any:
        return self._load().items()

    def keys(self) -> Any:
        return self._load().keys()

    def values(self) -> Any:
        return self._load().values()


# --- load / save -----------------------------------------------------------------------------------------------------


def load(path: Path, source: str) -> tuple[list[RunIndex], list[LoadWarning]] | None:
    """The cached scan of this exact file version, or None (no cache, stale, foreign or damaged entry)."""
    folder = cache_dir()
    if folder is None or not _SUPPORTED:
        return None
    try:
        identity = _identity(path, source, path.stat())
        rows_file, spans_file = _files(folder, identity)
        if not rows_file.is_file() or not spans_file.is_file():
            return None
        with pq.ParquetFile(rows_file) as pf:  # the footer only: rows are read when first asked for
            header = json.loads((pf.schema_arrow.metadata or {})[b"evaldash"])
            if header.get("identity") != identity:
                return None
            n_rows = pf.metadata.num_rows
        runs = [_run_of(r) for r in header["runs"]]
        warnings = [LoadWarning.model_validate(w) for w in header["warnings"]]
        counts = header["n_rows"]
        if len(counts) != len(runs) or sum(counts) != n_rows:
            return None
        tag = header["tag"]
        if (pq.read_schema(spans_file).metadata or {}).get(b"evaldash_key", b"").decode() != tag:
            return None
        with suppress(OSError):  # recently used: the size cap deletes entries least recently used first
            now = time.time_ns()
            os.utime(rows_file, ns=(now, now))  # a time given exactly: the kernel's own clock for files is coarse (ms)
        figures = header.get("figures") or {}
        per_run = figures.get("runs") if figures.get("version") == _figures_version() else None
        if not isinstance(per_run, list) or len(per_run) != len(runs):
            per_run = [None] * len(runs)
        stored = _StoredRows(rows_file, counts, identity)
        return [RunIndex(run=run, spans=LazySpans(spans_file, i, tag), load_rows=partial(stored.rows_of, i),  # type: ignore[arg-type]
                         figures=per_run[i]) for i, run in enumerate(runs)], warnings
    except Exception as exc:  # noqa: BLE001 - a damaged cache entry is re-parsed, never trusted and never fatal
        log.warning("evaldash cache: ignoring unreadable entry for %s (%s)", path, exc)
        return None


def save(path: Path, source: str, st: os.stat_result, runs: list[RunIndex], warnings: list[LoadWarning]) -> bool:
    """Write the scan of the file version `st` describes; False (and nothing written) when it cannot be kept exactly."""
    folder = cache_dir()
    if folder is None or not _SUPPORTED:
        return False
    try:
        identity = _identity(path, source, st)
        rows_file, spans_file = _files(folder, identity)
        run_json = [r.run.model_dump(mode="json") for r in runs]
        warn_json = [w.model_dump(mode="json") for w in warnings]
        # Only what round-trips exactly is kept (a NaN in a report would not): else the next start re-parses.
        if repr([_run_of(r) for r in run_json]) != repr([r.run for r in runs]) or \
                repr([LoadWarning.model_validate(w) for w in warn_json]) != repr(warnings):
            return False
        tag = rows_file.name.split(".", 1)[0]
        from loaders import query

        for r in runs:
            r.figures = r.figures if r.figures is not None else query.row_figures(r.run, r.rows)
        header = {"identity": identity, "tag": tag, "runs": run_json, "warnings": warn_json, "n_rows": [len(r.rows) for r in runs],
                  "figures": {"version": _figures_version(), "runs": [r.figures for r in runs]}}
        with gc_paused():  # columns of 100k+ values: full collections of a big heap would cost more than the write
            all_rows = [row for r in runs for row in r.rows]
            table = _row_table(all_rows, [i for i, r in enumerate(runs) for _ in r.rows])
            table = table.replace_schema_metadata({b"evaldash": json.dumps(header).encode()})
            span_cols: dict[str, list[Any]] = {"run_no": [], "sample_id": [], "attempt": [], "offset": [], "length": []}
            for i, r in enumerate(runs):
                for (sample_id, attempt), spans in r.spans.items():
                    for offset, length in spans:
                        span_cols["run_no"].append(i)
                        span_cols["sample_id"].append(sample_id)
                        span_cols["attempt"].append(attempt)
                        span_cols["offset"].append(offset)
                        span_cols["length"].append(length)
            span_types = {"run_no": pa.int32(), "sample_id": pa.string(), "attempt": pa.int64(), "offset": pa.int64(), "length": pa.int64()}
            spans_table = pa.table({k: pa.array(v, span_types[k]) for k, v in span_cols.items()})
            spans_table = spans_table.replace_schema_metadata({b"evaldash_key": tag.encode()})
        folder.mkdir(parents=True, exist_ok=True)
        for table_, target in ((spans_table, spans_file), (table, rows_file)):  # rows last: its presence means complete
            tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            pq.write_table(table_, tmp, compression="zstd")
            os.replace(tmp, target)
        _sweep(folder, rows_file)
        _trim(folder, rows_file)
        return True
    except Exception as exc:  # noqa: BLE001 - a cache that cannot be written only costs the next start a re-parse
        log.warning("evaldash cache: not written for %s (%s)", path, exc)
        return False
