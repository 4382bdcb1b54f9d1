"""A running job's progress moves in the browser without a manual reload."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.conftest_backend import KEY
from tests.e2e.conftest import start_server, stop_server, wait_for_app_run


def test_progress_moves_without_reload(page: Page, fake, tmp_path):
    fake.reset()
    server = start_server(tmp_path, [fake.url], env={"SYNTH_API_KEY": KEY})
    try:
        page.goto(f"{server.url}/run?run=eval-live000001")
        wait_for_app_run(page)
        bar = page.get_by_test_id("stProgress")
        expect(bar).to_contain_text(re.compile(r"\d+ of 6 done"))
        before = bar.inner_text()
        navigations: list[str] = []
        page.on("framenavigated", lambda frame: navigations.append(frame.url))
        fake.advance(3)
        expect(bar).not_to_have_text(before, timeout=20000)  # the 5 s fragment picked it up
        assert navigations == []  # no reload happened
    finally:
        stop_server(server)
