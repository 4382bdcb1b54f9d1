"""A long transcript in the browser: a hundred items at a time, and the part links move on and write the URL."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.conftest import long_conversation, one_sample_log
from tests.e2e.conftest import start_server, stop_server, wait_for_app_run

RUN = "261124000000LONGCONVO"


def test_later_items_shows_the_next_hundred_and_the_url_says_so(page: Page, tmp_path):
    log = one_sample_log(tmp_path / "long.jsonl", RUN, "long.dev.0", long_conversation(250))
    server = start_server(tmp_path, [log])
    try:
        page.goto(f"{server.url}/transcript?run={RUN}&sample=long.dev.0&attempt=0")
        wait_for_app_run(page)
        expect(page.get_by_text("msg-000", exact=True)).to_be_visible()
        expect(page.get_by_text("msg-100", exact=True)).to_have_count(0)
        expect(page.get_by_text(re.compile(r"Items 1–100 of .* · part 1 of 3"))).to_be_visible()

        page.get_by_role("link", name="Later items").click()
        wait_for_app_run(page)
        expect(page.get_by_text("msg-100", exact=True)).to_be_visible()
        expect(page.get_by_text("msg-000", exact=True)).to_have_count(0)
        expect(page).to_have_url(re.compile(r"[?&]part=2(&|$)"))
        assert "sample=long.dev.0" in page.url
    finally:
        stop_server(server)
