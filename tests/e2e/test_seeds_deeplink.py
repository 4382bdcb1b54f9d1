"""A pasted per-seed link reopens the same filtered table, and changing a filter changes the link."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from loaders.catalog import build_catalog
from loaders.registry import resolve
from tests.conftest import EXAMPLES
from tests.e2e.conftest import wait_for_app_run

RUN = "261120090000ARITHMINI"


def _rows():
    e = build_catalog([str(EXAMPLES)]).entries[RUN]
    return resolve(e.leaf).load_samples(e.native_run_id)


def test_deep_link_reopens_the_filtered_table_and_filters_write_the_url(goto):
    rows = _rows()
    failed = [r.sample_id for r in rows if r.error is None and r.correct is False and "dev.1" in r.sample_id]
    passed_dev1 = [r.sample_id for r in rows if r.correct is True and "dev.1" in r.sample_id]
    assert failed and passed_dev1

    page = goto(f"/seeds?run={RUN}&status=failed&q=dev.1")
    expect(page.get_by_role("heading", name="Per-seed table")).to_be_visible()
    expect(page.get_by_text(f"{len(failed)} of 60 attempts match · page 1 of 1")).to_be_visible()
    grid = page.get_by_test_id("stDataFrame")
    expect(grid).to_be_visible()
    for sample_id in failed:  # the canvas grid's accessible mirror carries the cell text
        expect(grid.get_by_text(sample_id, exact=True)).to_have_count(1)
    expect(grid.get_by_text(passed_dev1[0], exact=True)).to_have_count(0)
    expect(page.get_by_label("Search sample id, error and grader log")).to_have_value("dev.1")

    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="passed", exact=True).click()
    wait_for_app_run(page)
    expect(page.get_by_text(f"{len(passed_dev1)} of 60 attempts match")).to_be_visible()
    expect(grid.get_by_text(passed_dev1[0], exact=True)).to_have_count(1)
    expect(page).to_have_url(re.compile(r"[?&]status=passed(&|$)"))
    assert f"run={RUN}" in page.url and "q=dev.1" in page.url

    page.get_by_text("One row per seed (k of n passed)").click()
    wait_for_app_run(page)
    expect(page.get_by_text(f"{len(passed_dev1)} of 60 seeds match")).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]group=1(&|$)"))
    assert "status=passed" in page.url and "q=dev.1" in page.url
