"""Masking of secrets found inside source data (job configs, request bodies, specs)."""

from __future__ import annotations

import re
from typing import Any

_KEY_NAME = re.compile(r"(api[_-]?key|secret|token|password|authorization|bearer|credential)", re.IGNORECASE)
_KEY_VALUE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|sk_[A-Za-z0-9_\-]{8,}|Bearer\s+[A-Za-z0-9._\-]{8,})")
_TOKEN_COUNT = re.compile(r"(^|_)(tokens?|token_count)(_|$)|tokens_", re.IGNORECASE)


def mask_secret(value: str) -> str:
    """Only the last 4 characters of a secret are ever shown."""
    return "****" + value[-4:] if len(value) > 8 else "****"


def redact(obj: Any) -> Any:
    """A copy of `obj` with key-like fields and key-like string values masked."""
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for key, value in obj.items():
            name = str(key)
            if isinstance(value, str) and value and _KEY_NAME.search(name) and not _TOKEN_COUNT.search(name):
                out[key] = mask_secret(value)
            else:
                out[key] = redact(value)
        return out
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    if isinstance(obj, str):
        return _KEY_VALUE.sub(lambda m: mask_secret(m.group(0)), obj)
    return obj
