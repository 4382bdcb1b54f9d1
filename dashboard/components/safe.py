"""Untrusted text (transcripts, tool output, metadata, file names) rendered inert.

`st.text`/`st.code` interpret nothing; Markdown would turn `$..$` into LaTeX, load
remote images and follow links. Never pass untrusted text to st.markdown/st.html.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from loaders.schema import LoadWarning


def warnings_list(warnings: Sequence[LoadWarning], *, limit: int = 200) -> None:
    """Each warning as plain text with where it happened (file:line)."""
    lines = []
    for w in list(warnings)[:limit]:
        where = w.where()
        lines.append(f"{where}: {w.message}" if where else w.message)
    if len(warnings) > limit:
        lines.append(f"… and {len(warnings) - limit} more")
    st.code("\n".join(lines) or "(none)", language=None, wrap_lines=True)
