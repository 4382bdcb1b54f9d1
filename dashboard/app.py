"""evaldash entrypoint: a router and the frame every page shares (sidebar, sources).

Run: streamlit run dashboard/app.py -- SOURCE...
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `streamlit run` puts dashboard/ on sys.path, not the project root
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from dashboard import auth  # noqa: E402
from dashboard.components import sidebar  # noqa: E402

VIEWS = Path(__file__).resolve().parent / "views"


def pages() -> dict[str, list[st.Page]]:
    return {
        "Results": [
            st.Page(VIEWS / "runs.py", title="Runs", icon=":material/table_rows:", url_path="runs", default=True),
            st.Page(VIEWS / "compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
        ],
        "Inspect": [
            st.Page(VIEWS / "run.py", title="Run summary", icon=":material/insights:", url_path="run"),
            st.Page(VIEWS / "seeds.py", title="Per-seed table", icon=":material/table:", url_path="seeds"),
            st.Page(VIEWS / "transcript.py", title="Transcript", icon=":material/forum:", url_path="transcript"),
        ],
    }


def run() -> None:
    # an emoji icon: a :material/ page icon makes every page fetch its SVG from Google Fonts
    st.set_page_config(page_title="evaldash", page_icon="📊", layout="wide")
    auth.gate()
    navigation = st.navigation(pages())
    sidebar.render()
    navigation.run()


run()
