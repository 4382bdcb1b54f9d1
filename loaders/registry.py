"""Which loader reads a source: the first whose cheap `handles()` says yes, or a forced kind.

Built-in kinds are registered by module import below; third-party kinds can join
through the `evaldash.loaders` entry-point group (skipped under tests).
"""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path

from loaders.base import Loader
from loaders.errors import SourceError

_REGISTRY: dict[str, type[Loader]] = {}
_ORDER: list[str] = []


def register(cls: type[Loader]) -> type[Loader]:
    """Class decorator; registration order is detection order."""
    if cls.kind not in _REGISTRY:
        _ORDER.append(cls.kind)
    _REGISTRY[cls.kind] = cls
    return cls


def kinds() -> list[str]:
    _ensure_builtins()
    return list(_ORDER)


def loader_class(kind: str) -> type[Loader]:
    _ensure_builtins()
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise SourceError(kind, f"unknown source kind {kind!r} (known: {', '.join(_ORDER)})") from None


def split_kind(source: str) -> tuple[str, str]:
    """`kind:source` forces a kind (e.g. `recorder:run.txt`); URLs keep their scheme."""
    head, sep, rest = source.partition(":")
    if sep and head in kinds() and not rest.startswith("//"):
        return head, rest
    return "auto", source


def resolve(source: str, kind: str = "auto") -> Loader:
    """A loader for `source`; raises SourceError naming the input when nothing reads it."""
    _ensure_builtins()
    if kind == "auto":
        kind, source = split_kind(source)
    if kind != "auto":
        return loader_class(kind)(source)
    if not source.startswith(("http://", "https://")) and not os.path.exists(source):
        raise SourceError(source, "no such file or folder")
    for name in _ORDER:
        cls = _REGISTRY[name]
        try:
            if cls.handles(source):
                return cls(source)
        except OSError as exc:
            raise SourceError(source, f"cannot read: {exc.strerror or exc}") from exc
    raise SourceError(source, f"unrecognised input ({_preview(source)})")


def _preview(source: str) -> str:
    path = Path(source)
    if path.is_dir():
        return "a folder with no eval logs, traces or results"
    try:
        head = path.read_bytes()[:80].decode("utf-8", errors="replace").splitlines()[0:1]
    except OSError as exc:
        return f"cannot read: {exc.strerror}"
    return f"starts with {head[0][:60]!r}" if head else "empty file"


_BUILTINS_LOADED = False


def _ensure_builtins() -> None:
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    import loaders.sources  # noqa: F401  (registers the built-in kinds, in detection order)

    if os.environ.get("EVALDASH_NO_PLUGINS") or "PYTEST_CURRENT_TEST" in os.environ:
        return
    for entry in metadata.entry_points(group="evaldash.loaders"):
        try:
            register(entry.load())
        except Exception:  # noqa: BLE001 - a broken plugin must not break the app
            continue
