"""What a person sees: two bundled runs compared in a real browser, flips, p-value, transcripts side by side."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.e2e.conftest import wait_for_app_run

MINI, FULL = "261120090000ARITHMINI", "261120100000ARITHFULL"
LINK = f"/compare?runs={MINI},{FULL}&baseline={MINI}"


def metric_value(page, label: str):
    return page.get_by_test_id("stMetric").filter(has=page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True)) \
        .get_by_test_id("stMetricValue")


def test_compare_deep_link_shows_flips_and_p_value(goto):
    page = goto(LINK)
    expect(page.get_by_role("heading", name="Compare runs")).to_be_visible()
    expect(metric_value(page, "Samples in both")).to_have_text("60")
    expect(metric_value(page, "Improved")).to_have_text("26")
    expect(metric_value(page, "Regressed")).to_have_text("5")
    expect(metric_value(page, "p-value")).to_have_text("0.0001922")
    expect(page.get_by_text("Test: exact McNemar", exact=False)).to_be_visible()
    expect(page.get_by_text("Improvement: significantly better than the baseline", exact=False)).to_be_visible()
    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(3)
    # the flips filter writes the link, so the filtered view can be shared
    page.get_by_role("radio", name="regressed", exact=True).click()  # a segmented control option
    wait_for_app_run(page)
    expect(page).to_have_url(re.compile(r"flip=regressed"))
    expect(page.get_by_text("5 of 60 aligned pairs", exact=False)).to_be_visible()


def test_chosen_flip_opens_transcripts_side_by_side(goto):
    page = goto(LINK + "&sample=arith.dev.12")
    expect(page.get_by_text("First divergence: message 3", exact=False)).to_be_visible()
    left = page.get_by_text("1538", exact=True)  # gpt-4o-mini's wrong answer
    right = page.get_by_text("1548", exact=True)  # gpt-4o's right one
    expect(left).to_be_visible()
    expect(right).to_be_visible()
    lbox, rbox = left.bounding_box(), right.bounding_box()
    assert lbox["x"] + lbox["width"] < rbox["x"], "the two transcripts should sit in two columns"
    assert abs(lbox["y"] - rbox["y"]) < 40, "aligned messages should sit on the same row"
    expect(page.get_by_test_id("stChatMessage").filter(visible=True)).to_have_count(2)  # the identical prefix waits
    page.get_by_text("2 identical message(s) before the first divergence").click()  # ... in a closed expander
    expect(page.get_by_test_id("stChatMessage").filter(visible=True)).to_have_count(6)
