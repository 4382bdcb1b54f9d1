"""Load check for a shared URL: N concurrent sessions click through pages for T seconds.

Starts one local server on the bundled examples and opens N sessions that visit the Runs,
Run, Seeds, Transcript and Compare pages in turn, then prints errors and p50/p95 page times
against the target (0 errors, p95 < 2 s).

By default each session is a websocket client speaking the browser's own protocol
(BackMsg rerun requests, ForwardMsg deltas until `script_finished`): that measures the
server, not 20 Chromium renderers competing for the same 2 cores. `--browser` drives real
Chromium contexts instead (page time then includes the browser's own work).

    .venv/bin/python -m benchmarks.load [--sessions 20] [--seconds 60] [--browser]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import websockets
from playwright.async_api import Page, async_playwright
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from loaders.catalog import build_catalog  # noqa: E402
from tests.e2e.conftest import CHROMIUM, start_server, stop_server  # noqa: E402

LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def page_paths(sources: list[str]) -> list[str]:
    """Deep links for every page kind, built from the real catalog of the sources."""
    catalog = build_catalog(sources)
    entries = list(catalog.entries.values())
    with_rows = [e for e in entries if e.run.attribution != "aggregate_only"]
    first = with_rows[0]
    rows = __import__("loaders").resolve(first.leaf).load_samples(first.native_run_id)
    paths = ["/", f"/run?run={first.run_id}", f"/seeds?run={first.run_id}"]
    if rows:
        paths.append(f"/transcript?run={first.run_id}&sample={rows[0].sample_id}&attempt={rows[0].attempt}")
    pair = [e.run_id for e in entries if e.run.eval_name == "arith.dev.v0"][:2]
    if len(pair) == 2:
        paths.append(f"/compare?runs={pair[0]},{pair[1]}&baseline={pair[0]}")
    return paths


async def wait_idle(page: Page) -> None:
    await page.wait_for_timeout(100)
    await page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(state="attached", timeout=30000)
    await page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(state="attached", timeout=30000)


async def session(browser, url: str, paths: list[str], until: float, times: list[float], errors: list[str], offset: int) -> None:
    context = await browser.new_context()
    page = await context.new_page()
    i = offset
    while time.monotonic() < until:
        path = paths[i % len(paths)]
        i += 1
        start = time.monotonic()
        try:
            await page.goto(url + path, wait_until="domcontentloaded")
            await wait_idle(page)
            times.append(time.monotonic() - start)
            if await page.get_by_test_id("stException").count():
                errors.append(f"{path}: the page shows an exception")
        except Exception as exc:  # noqa: BLE001 - every failure is counted and reported, none stops the run
            errors.append(f"{path}: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
    await context.close()


async def ws_session(url: str, paths: list[str], until: float, times: list[float], errors: list[str], offset: int,
                     per_page: dict[str, list[float]] | None = None, max_pages: int | None = None) -> None:
    """One browser-less session: ask for each page as the frontend does, time until the script finished."""
    stream = url.replace("http", "ws", 1) + "/_stcore/stream"
    i = offset
    try:
        async with websockets.connect(stream, subprotocols=["streamlit"], max_size=None, open_timeout=30) as ws:
            while time.monotonic() < until and (max_pages is None or i - offset < max_pages):
                path = paths[i % len(paths)]
                i += 1
                page, _, query = path.lstrip("/").partition("?")
                msg = BackMsg()
                msg.rerun_script.query_string = query
                msg.rerun_script.page_name = page
                start = time.monotonic()
                await ws.send(msg.SerializeToString())
                while True:
                    fwd = ForwardMsg()
                    fwd.ParseFromString(await asyncio.wait_for(ws.recv(), timeout=60))
                    kind = fwd.WhichOneof("type")
                    if kind == "delta" and fwd.delta.new_element.WhichOneof("type") == "exception":
                        errors.append(f"{path}: exception {fwd.delta.new_element.exception.type}")
                    elif kind == "page_not_found":
                        errors.append(f"{path}: page not found")
                    elif kind == "script_finished":
                        break
                times.append(time.monotonic() - start)
                if per_page is not None:
                    per_page.setdefault(path.split("?")[0], []).append(times[-1])
    except Exception as exc:  # noqa: BLE001 - a dropped session is an error to report, not a crash
        errors.append(f"session {offset}: {type(exc).__name__}: {str(exc)[:120]}")


async def main_async(sessions: int, seconds: float, browser_mode: bool) -> int:
    sources = [str(ROOT / "examples")]
    paths = page_paths(sources)
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(Path(tmp), sources)
        try:
            cold: list[float] = []  # one pass first: the figures are for a warm server, as a team's shared URL is
            await ws_session(server.url, paths, time.monotonic() + 300, cold, [], 0, max_pages=len(paths))
            times: list[float] = []
            errors: list[str] = []
            per_page: dict[str, list[float]] = {}
            until = time.monotonic() + seconds
            if browser_mode:
                async with async_playwright() as pw:
                    browser = await pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
                    await asyncio.gather(*(session(browser, server.url, paths, until, times, errors, k) for k in range(sessions)))
                    await browser.close()
            else:
                await asyncio.gather(*(ws_session(server.url, paths, until, times, errors, k, per_page) for k in range(sessions)))
        finally:
            stop_server(server)
            log_errors = [line for line in server.log_text().splitlines() if "Traceback" in line or "ERROR" in line]
    times.sort()
    p50 = statistics.median(times) if times else float("nan")
    p95 = times[int(0.95 * (len(times) - 1))] if times else float("nan")
    ok = not errors and not log_errors and p95 < 2.0
    print(f"pages visited       : {', '.join(paths)}")
    mode = "Chromium contexts" if browser_mode else "websocket clients (the browser's protocol)"
    print(f"sessions x seconds  : {sessions} {mode} x {seconds:.0f} s on {os.cpu_count()} cores")
    print(f"first (cold) pass   : {sum(cold):.2f} s for {len(cold)} pages, before the timed window")
    print(f"page loads          : {len(times)}")
    print(f"errors              : {len(errors)} in pages, {len(log_errors)} in the server log (target 0)")
    for err in (errors + log_errors)[:10]:
        print(f"  - {err}")
    print(f"page time p50 / p95 : {p50:.2f} s / {p95:.2f} s (target p95 < 2 s)")
    for path, values in sorted(per_page.items()):
        values.sort()
        print(f"  {path:<12} n={len(values):<4} p50 {statistics.median(values):.2f} s  p95 {values[int(0.95 * (len(values) - 1))]:.2f} s")
    print("result              :", "PASS" if ok else "FAIL")
    return 0 if ok else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--browser", action="store_true", help="real Chromium sessions instead of websocket clients")
    args = parser.parse_args()
    sys.exit(asyncio.run(main_async(args.sessions, args.seconds, args.browser)))


if __name__ == "__main__":
    main()
