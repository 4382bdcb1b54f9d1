"""Where the app's sources come from: `-- args`, EVALDASH_SOURCES, [sources] in secrets, the sidebar.

No streamlit calls at import time; `configured_sources` takes the secrets mapping as an argument
so it can be tested without a running app.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BUNDLED_EXAMPLES = ROOT / "examples"
ENV_VAR = "EVALDASH_SOURCES"


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
    unique = list(dict.fromkeys(found))
    return unique or [str(BUNDLED_EXAMPLES)]


def backend_keys(secrets: Mapping[str, Any] | None) -> dict[str, str]:
    """Base URL -> API key from `[backends.<name>]` (url, api_key); never shown anywhere."""
    out: dict[str, str] = {}
    backends = (secrets or {}).get("backends") or {}
    if isinstance(backends, Mapping):
        for conf in backends.values():
            if isinstance(conf, Mapping) and conf.get("url") and conf.get("api_key"):
                out[str(conf["url"]).rstrip("/")] = str(conf["api_key"])
    return out
