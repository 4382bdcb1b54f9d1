"""AppTest setup: absolute app path, clean caches, sources injected per test."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

APP = ROOT / "dashboard" / "app.py"


@pytest.fixture(autouse=True)
def _clear_caches():
    st.cache_data.clear()
    st.cache_resource.clear()
    yield


@pytest.fixture
def make_app(monkeypatch) -> Callable[..., AppTest]:
    def make(*sources: str, **query: str) -> AppTest:
        monkeypatch.setenv("EVALDASH_SOURCES", ",".join(sources))
        at = AppTest.from_file(str(APP), default_timeout=30)
        for key, value in query.items():
            at.query_params[key] = value
        return at

    return make


from tests.conftest_backend import fake, fake_server, make_loader  # noqa: E402, F401  (the fake backend on 127.0.0.1)
