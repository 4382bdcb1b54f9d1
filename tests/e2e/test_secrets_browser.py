"""The backend API key never reaches the rendered page, the URL or the server log."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.conftest_backend import KEY
from tests.e2e.conftest import start_server, stop_server, wait_for_app_run


def test_key_stays_out_of_page_url_and_log(page: Page, fake_server, tmp_path):
    server = start_server(tmp_path, [fake_server, f"{fake_server}#eval-does-not-exist"], env={"SYNTH_API_KEY": KEY})
    try:
        seen_urls: list[str] = []
        page.on("request", lambda request: seen_urls.append(request.url))
        page.goto(server.url)
        wait_for_app_run(page)
        expect(page.get_by_test_id("stDataFrame").get_by_text("eval-3f9c1a2b7d").first).to_be_attached()
        for path in ("/run?run=eval-3f9c1a2b7d", "/seeds?run=eval-3f9c1a2b7d"):
            page.goto(server.url + path)
            wait_for_app_run(page)
            html = page.content()
            assert KEY not in html and KEY[-12:] not in html
            assert KEY not in page.url
        assert not [u for u in seen_urls if KEY in u]
        log = server.log_text()
        assert KEY not in log and KEY[-12:] not in log
    finally:
        stop_server(server)
