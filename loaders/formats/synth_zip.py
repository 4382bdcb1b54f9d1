"""A ZIP of synth traces (the backend's `/traces` body, or a zipped run folder), read in memory.

See ../shared/formats/synth-backend-api.md §6. Upstream clients `extractall()` the
archive; evaldash never writes it anywhere. Unsafe member names (`..`, absolute) are
refused, sizes are checked against the headers before reading, and every read is bounded
so a header that lies about its size cannot exhaust memory.
"""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loaders.formats.synth_results import looks_like_report
from loaders.formats.synth_trace import is_trace, seed_of
from loaders.schema import LoadWarning

MAX_TOTAL_BYTES = 200 * 1024 * 1024  # uncompressed, all members together
MAX_RATIO = 100  # declared uncompressed size / compressed size of one member (JSON rarely passes 20)
RATIO_FLOOR = 1024 * 1024  # small members may compress well without being a threat
MAX_MEMBERS = 20_000
_CHUNK = 1 << 16


class _Refused(Exception):
    pass


@dataclass
class ZipContents:
    """What a traces ZIP holds, by role; every skipped or refused member has a warning."""

    traces: dict[int, dict[str, Any]] = field(default_factory=dict)
    members: dict[int, str] = field(default_factory=dict)  # seed -> member name
    manifest: dict[str, Any] | None = None
    results: tuple[str, bytes] | None = None  # a zipped `--output-json` file
    report: tuple[str, str] | None = None  # a zipped `--output-txt` file
    warnings: list[LoadWarning] = field(default_factory=list)


def read_zip_traces(data: bytes | str | os.PathLike[str], origin: str) -> tuple[dict[int, dict[str, Any]], list[LoadWarning]]:
    """seed -> trace dict from a ZIP (bytes or a path), and a warning per member not loaded."""
    contents = read_zip(data, origin)
    return contents.traces, contents.warnings


def unsafe_name(name: str) -> str | None:
    """Why a member name could escape an extraction folder, or None when it is safe."""
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return "absolute path"
    if any(part == ".." for part in re.split(r"[/\\]", name)):
        return "contains '..'"
    return None


def read_zip(data: bytes | str | os.PathLike[str], origin: str, *, only: str | None = None) -> ZipContents:
    """Every member by role. `only` reads just that member (a transcript opened later)."""
    out = ZipContents()
    warn = out.warnings

    def note(code: str, message: str, member: str | None = None) -> None:
        warn.append(LoadWarning(code=code, message=f"{member}: {message}" if member else message, file=origin))

    try:
        if isinstance(data, bytes | bytearray):
            archive_size = len(data)
            zf = zipfile.ZipFile(io.BytesIO(data))
        else:
            archive_size = Path(data).stat().st_size
            zf = zipfile.ZipFile(Path(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        note("bad_zip", f"not a readable ZIP ({exc})")
        return out
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            note("zip_too_many_members", f"{len(infos)} members is over the limit of {MAX_MEMBERS}; only the first are read")
            infos = infos[:MAX_MEMBERS]
        budget = MAX_TOTAL_BYTES
        for info in infos:
            name = info.filename
            if only is not None and name != only:
                continue
            why = unsafe_name(name)
            if why:
                note("unsafe_member", f"refused: unsafe member name ({why})", name)
                continue
            parts = name.split("/")
            base = parts[-1]
            if info.is_dir() or "__MACOSX" in parts or base.startswith("._") or not base:
                continue
            lower = base.lower()
            if not lower.endswith((".json", ".txt")):
                continue
            if info.flag_bits & 0x1:
                note("zip_encrypted", "refused: the member is encrypted", name)
                continue
            size = info.file_size
            ratio = size / max(info.compress_size, 1)
            if size > RATIO_FLOOR and (ratio > MAX_RATIO or size > archive_size * MAX_RATIO):
                note("zip_bomb", f"refused: declares {size} bytes uncompressed from {info.compress_size} compressed "
                     f"(ratio {ratio:.0f}:1, archive {archive_size} bytes): a zip bomb?", name)
                continue
            if size > budget:
                note("zip_too_large", f"refused: {size} bytes would pass the {MAX_TOTAL_BYTES // (1024 * 1024)} MB "
                     "limit on the archive's uncompressed total", name)
                continue
            try:
                raw = _read_bounded(zf, info, min(size, budget))
            except _Refused as exc:
                note("zip_bomb", f"refused: {exc}", name)
                continue
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
                note("bad_member", f"cannot read ({exc})", name)
                continue
            budget -= len(raw)
            _classify(out, name, base, raw, note)
    return out


def _read_bounded(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    """At most `limit` bytes: a member that inflates past its declared size is refused mid-read."""
    chunks: list[bytes] = []
    total = 0
    with zf.open(info) as fh:
        while True:
            chunk = fh.read(min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise _Refused(f"inflates past {limit} bytes (declared {info.file_size})")
            chunks.append(chunk)
    return b"".join(chunks)


def _classify(out: ZipContents, name: str, base: str, raw: bytes, note: Any) -> None:
    if base.lower().endswith(".txt"):
        text = raw.decode("utf-8", errors="replace")
        if looks_like_report(text[:4000]) and out.report is None:
            out.report = (name, text)
        return
    if base == "manifest.json":
        try:
            manifest = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            note("bad_manifest", f"manifest is not JSON ({exc}); ignored", name)
            return
        out.manifest = manifest if isinstance(manifest, dict) else {"value": manifest}
        return
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        detail = f"{exc.msg} at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
        note("bad_trace", f"not JSON ({detail}); skipped", name)
        return
    if not is_trace(obj):
        if isinstance(obj, dict) and {"config", "results"} <= obj.keys() and out.results is None:
            out.results = (name, raw)
            return
        note("not_a_trace", "not a synth trace (neither compact v3 nor a full SessionTrace); skipped", name)
        return
    seed = seed_of(obj, base)
    if seed is None:
        note("no_seed", "trace has no seed (not in the name, metadata.seed or metadata.run_id); skipped", name)
        return
    if seed in out.traces:
        note("duplicate_seed", f"a second trace for seed {seed} (first: {out.members[seed]}); skipped", name)
        return
    out.traces[seed] = obj
    out.members[seed] = name
