"""Files a user drops in the browser become sources, read by the same loaders as files on disk.

Each session gets its own temporary folder; names are reduced to a safe base name so an
upload can never write outside it. Zips are not extracted here: the synth loader reads
them in memory with its traversal and bomb checks.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

MAX_UPLOAD_MB = int(os.environ.get("EVALDASH_MAX_UPLOAD_MB", "200"))
ACCEPTED = ["jsonl", "log", "ndjson", "json", "zip", "txt"]
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(name: str) -> str:
    """The base name only, with anything but letters, digits, `.`, `_`, `-` replaced; never empty or hidden."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = _UNSAFE.sub("_", base).lstrip(".") or "upload"
    return cleaned[:120]


def session_folder(existing: str | None) -> Path:
    if existing and Path(existing).is_dir():
        return Path(existing)
    return Path(tempfile.mkdtemp(prefix="evaldash-upload-"))


def store(folder: Path, name: str, data: bytes) -> Path:
    """Write one upload into `folder` (never elsewhere); a second upload of the same name gets a suffix."""
    target = folder / safe_name(name)
    stem, suffix = target.stem, target.suffix
    n = 2
    while target.exists():
        target = folder / f"{stem}-{n}{suffix}"
        n += 1
    if target.resolve().parent != folder.resolve():
        raise ValueError(f"refusing to write {name!r} outside the upload folder")
    target.write_bytes(data)
    return target
