"""column_config for every table, declared once."""

from __future__ import annotations

from typing import Any

import streamlit as st


def runs_columns() -> dict[str, Any]:
    return {
        "run_id": st.column_config.TextColumn("Run", pinned=True),
        "open": st.column_config.LinkColumn("Summary", display_text="open", help="Deep link to the run summary"),
        "display_name": st.column_config.TextColumn("Name"),
        "source_kind": st.column_config.TextColumn("Kind"),
        "eval_name": st.column_config.TextColumn("Eval"),
        "model": st.column_config.TextColumn("Model"),
        "status": st.column_config.TextColumn("Status"),
        "created_at": st.column_config.DatetimeColumn("Created (UTC)", format="YYYY-MM-DD HH:mm"),
        "n_samples": st.column_config.NumberColumn("Samples"),
        "n_attempts": st.column_config.NumberColumn("Attempts"),
        "score_mean": st.column_config.ProgressColumn("Score", min_value=0.0, max_value=1.0, format="%.3f"),
        "reported_score": st.column_config.NumberColumn("Reported", format="%.3f", help="What the upstream tool reported"),
        "n_errors": st.column_config.NumberColumn("Errors"),
        "tokens_total": st.column_config.NumberColumn("Tokens", help="Empty = unknown (no usage recorded)"),
        "cost_usd_total": st.column_config.NumberColumn("Cost ($)", format="%.4f"),
        "n_warnings": st.column_config.NumberColumn("Warnings"),
        "location": st.column_config.TextColumn("Location"),
    }
