"""What a person sees: the Runs page in a real browser."""

from __future__ import annotations

from playwright.sync_api import expect


def test_runs_page_lists_bundled_runs(goto):
    page = goto("/")
    expect(page.get_by_role("heading", name="Runs")).to_be_visible()
    grid = page.get_by_test_id("stDataFrame")
    expect(grid).to_be_visible()
    # the grid is canvas-drawn; its accessible table mirror carries the cell text (the id, and the open link's URL)
    expect(grid.get_by_text("261122131243WIR4AQPI").first).to_be_attached()
    expect(grid.get_by_text("261120100000ARITHFULL").first).to_be_attached()
    expect(page.get_by_text("What failed to load")).to_be_visible()
    page.get_by_text("What failed to load").click()
    expect(page.get_by_text("empty.jsonl: skipped: unrecognised input (empty file)")).to_be_visible()
