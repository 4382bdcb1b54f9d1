"""Where the app's sources come from: `-- args`, EVALDASH_SOURCES, [sources] in secrets, the sidebar.

No streamlit calls at import time; `configured_sources` takes the secrets mapping as an argument
so it can be tested without a running app.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BUNDLED_EXAMPLES = ROOT / "examples"
ENV_VAR = "EVALDASH_SOURCES"
ROOTS_VAR = "EVALDASH_ALLOWED_ROOTS"


def read_secrets() -> dict[str, Any]:
    """`st.secrets` as a plain dict; empty when there is no (or a malformed) secrets.toml."""
    import streamlit as st

    try:
        return dict(st.secrets)
    except Exception:  # noqa: BLE001 - no or malformed secrets.toml: run with what the environment gives
        return {}


def split_sources(text: str) -> list[str]:
    """Commas or newlines separate sources; a path separator would cut `http://host:8000` in two."""
    return [part.strip() for part in re.split(r"[,\n]", text) if part.strip()]


def _from_secrets(secrets: Mapping[str, Any] | None) -> list[str]:
    if not secrets:
        return []
    value = secrets.get("sources")
    if isinstance(value, str):
        return split_sources(value)
    if isinstance(value, Sequence):
        return [str(v) for v in value]
    if isinstance(value, Mapping):
        out: list[str] = []
        for item in value.values():
            out.extend(split_sources(item) if isinstance(item, str) else [str(v) for v in item])
        return out
    return []


def configured_sources(argv: Sequence[str] | None = None, secrets: Mapping[str, Any] | None = None,
                       environ: Mapping[str, str] | None = None) -> list[str]:
    """All configured sources in order, without duplicates; the bundled examples when none is set."""
    if argv is None:  # only `streamlit run dashboard/app.py -- SOURCE...` passes sources; not pytest's argv
        argv = sys.argv[1:] if Path(sys.argv[0]).name == "app.py" else []
    environ = os.environ if environ is None else environ
    found = [a for a in argv if not a.startswith("-")]
    found += split_sources(environ.get(ENV_VAR, ""))
    found += _from_secrets(secrets)
    found += [b.url for b in backend_settings(secrets)]
    unique = list(dict.fromkeys(found))
    return unique or [str(BUNDLED_EXAMPLES)]


@dataclass(frozen=True)
class BackendSettings:
    """One `[backends.<name>]` table. `repr` hides the key so it cannot reach a log or a page by accident."""

    name: str
    url: str
    api_key: str | None = field(default=None, repr=False)
    jobs: tuple[str, ...] = ()


def backend_settings(secrets: Mapping[str, Any] | None) -> list[BackendSettings]:
    out: list[BackendSettings] = []
    backends = (secrets or {}).get("backends") or {}
    if isinstance(backends, Mapping):
        for name, conf in backends.items():
            if isinstance(conf, Mapping) and conf.get("url"):
                jobs = conf.get("jobs") or ()
                out.append(BackendSettings(name=str(name), url=str(conf["url"]).rstrip("/"),
                                           api_key=str(conf["api_key"]) if conf.get("api_key") else None,
                                           jobs=tuple(str(j) for j in jobs) if not isinstance(jobs, str) else tuple(split_sources(jobs))))
    return out


def settings_for(url: str, secrets: Mapping[str, Any] | None) -> BackendSettings | None:
    """The configured backend whose base URL this source points at (`/api` and a trailing `/` ignored)."""
    def norm(u: str) -> str:
        u = u.split("#", 1)[0].rstrip("/")
        return u[:-4] if u.endswith("/api") else u

    for conf in backend_settings(secrets):
        if norm(conf.url) == norm(url):
            return conf
    return None


def allowed_roots(configured: Sequence[str], environ: Mapping[str, str] | None = None) -> list[Path]:
    """Folders a viewer may point the server at: EVALDASH_ALLOWED_ROOTS, else the configured sources' folders.

    On a shared URL the sidebar field and `?source=` links run with the server's file access;
    without a fence, anyone holding the URL could make it open (and preview) any file.
    """
    environ = os.environ if environ is None else environ
    named = split_sources(environ.get(ROOTS_VAR, ""))
    if named:
        return [Path(p).resolve() for p in named]
    roots = []
    for source in configured:
        if source.startswith(("http://", "https://")):
            continue
        path = Path(source.partition(":")[2] if ":" in source and not Path(source).exists() else source).resolve()
        roots.append(path if path.is_dir() else path.parent)
    return roots


def is_allowed_source(source: str, roots: Sequence[Path], extra_roots: Sequence[Path] = ()) -> bool:
    """A user-added source: a backend URL, or a path inside an allowed root (after resolving `..` and links)."""
    if source.startswith(("http://", "https://")):
        return True
    path = Path(source.partition(":")[2] if ":" in source and not Path(source).exists() else source).resolve()
    return any(path == root or root in path.parents for root in [*roots, *extra_roots])
