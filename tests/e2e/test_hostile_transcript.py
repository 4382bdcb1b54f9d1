"""A hostile transcript in real Chromium: nothing runs, nothing is fetched, nothing restyles the app.

The fixture's prompts and replies hold script tags, an `<img onerror>`, a `javascript:` link,
a remote Markdown image, a `<style>` that would hide the app, `$..$` LaTeX and `:red[..]`;
one sample id carries a remote image and directives too (it ends up in link labels).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from urllib.parse import quote, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import FIXTURES
from tests.e2e.conftest import Server, start_server, stop_server, wait_for_app_run

RUN = "261123090000HOSTILE1"
SCREENSHOTS = os.environ.get("EVALDASH_SCREENSHOTS")  # a folder: save what the browser showed, for review
SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src="http://127.0.0.1:9/x.png" onerror="window.__pwned=2">'


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory) -> Iterator[Server]:
    server = start_server(tmp_path_factory.mktemp("hostile"), [str(FIXTURES / "hostile" / "hostile.jsonl")])
    yield server
    stop_server(server)


@pytest.fixture
def requests_seen(page: Page) -> list[str]:
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    return seen


def _open(page: Page, server: Server, sample: str) -> None:
    page.goto(f"{server.url}/transcript?run={RUN}&sample={quote(sample)}&attempt=0")
    wait_for_app_run(page)
    expect(page.get_by_test_id("stChatMessage").first).to_be_visible(timeout=30000)


def _assert_safe(page: Page, server: Server, requests_seen: list[str]) -> None:
    assert page.evaluate("typeof window.__pwned") == "undefined"
    app_host = urlsplit(server.url).netloc
    foreign = [u for u in requests_seen if urlsplit(u).scheme in ("http", "https", "ws", "wss")
               and urlsplit(u).netloc != app_host]
    assert foreign == [], f"requests left the page: {foreign}"
    app = page.get_by_test_id("stApp")
    expect(app).to_be_visible()
    assert app.evaluate("el => getComputedStyle(el).display") != "none"
    assert page.evaluate("getComputedStyle(document.body).display") != "none"
    expect(page.locator("[data-testid='stMain'] script")).to_have_count(0)
    expect(page.locator("[data-testid='stMain'] style:not([data-emotion])")).to_have_count(0)
    expect(page.locator("img[src*='127.0.0.1:9']")).to_have_count(0)
    expect(page.locator("a[href^='javascript:']")).to_have_count(0)
    expect(page.locator("a[href*='127.0.0.1:9']")).to_have_count(0)  # URLs from the transcript are text, not links
    expect(page.locator(".katex")).to_have_count(0)


def test_hostile_transcript_is_inert_as_text_and_as_markdown(page: Page, hostile_server: Server, requests_seen: list[str]):
    _open(page, hostile_server, "hostile.0")
    # as text (the default): every hostile string is shown literally
    main = page.get_by_test_id("stMain")
    for literal in (SCRIPT, IMG, "[click me](javascript:window.__pwned=3)", "![tracker](http://127.0.0.1:9/track.png)",
                    "<style>.stApp{display:none}</style>", "$E=mc^2$", ":red[x]"):
        expect(main.get_by_text(literal, exact=False).first).to_be_visible()
    _assert_safe(page, hostile_server, requests_seen)

    # opt in to Markdown for every message: formatting only, still inert
    toggles = page.get_by_test_id("stCheckbox").filter(has_text="Render Markdown")
    count = toggles.count()
    assert count >= 2
    for i in range(count):
        toggles.nth(i).locator("label").click()
        wait_for_app_run(page)
    rendered = page.get_by_test_id("stChatMessage").get_by_test_id("stMarkdown")
    expect(rendered).to_have_count(count)
    expect(rendered.filter(has_text="$E=mc^2$").first).to_be_visible()
    expect(rendered.filter(has_text=SCRIPT).first).to_be_visible()
    expect(rendered.filter(has_text="tracker (image: http://127.0.0.1:9/track.png)").first).to_be_visible()
    expect(rendered.filter(has_text="click me (javascript: link removed)").first).to_be_visible()
    expect(rendered.filter(has_text="red[x]").first).to_be_visible()
    page.wait_for_timeout(500)  # give any image or script a moment to fire before checking
    _assert_safe(page, hostile_server, requests_seen)
    if SCREENSHOTS:
        page.screenshot(path=f"{SCREENSHOTS}/hostile-markdown.png", full_page=True)


def test_hostile_sample_id_in_links_stays_text(page: Page, hostile_server: Server, requests_seen: list[str]):
    hostile_id = "hostile.1 ![id](http://127.0.0.1:9/id.png) :red[id] $x$"
    _open(page, hostile_server, hostile_id)
    expect(page.get_by_test_id("stMain").get_by_text(f"sample {hostile_id}", exact=False)).to_be_visible()
    page.get_by_test_id("stPageLink").filter(has_text="Previous").click()
    expect(page).to_have_url(re.compile(r"sample=hostile\.0&"))
    wait_for_app_run(page)
    page.get_by_test_id("stExpander").filter(has_text="Search this run").locator("summary").click()
    page.get_by_label("Search every transcript of this run (case-insensitive)").fill("pwned=2")
    page.get_by_test_id("stMain").get_by_role("button", name="Search").click()
    expect(page).to_have_url(re.compile(r"q=pwned(%3D|=)2"))
    wait_for_app_run(page)
    expect(page.get_by_test_id("stPageLink").filter(has_text="![id](http://127.0.0.1:9/id.png)")).to_have_count(1)
    page.wait_for_timeout(500)
    _assert_safe(page, hostile_server, requests_seen)
    if SCREENSHOTS:
        page.screenshot(path=f"{SCREENSHOTS}/hostile-search.png", full_page=True)
