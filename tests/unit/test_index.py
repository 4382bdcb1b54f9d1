"""Shared helpers of the row index that every dialect's scan uses."""

from __future__ import annotations

import pytest

from loaders.formats.index import numeric_sort_key

TRICKY_IDS = ["task_12", "x.dev.84", "x.dev.100", "_5", "a_", "a.", "a_1-2", "a.1_2", "x_12.5", "t#7", "a_1#x", "a_²",
              "a_٣", "a_1_000", "a_ 7", "a_+3", "plain", "", "a-b_07", "a_12.x", "a.b_3-4#5"]


def _by_the_rule(sample_id: str) -> tuple[int, str]:
    """The rule as written: the integer after the last `.`, `_`, `-` or `#`, as int() reads it; else last."""
    tail = sample_id[max(sample_id.rfind(sep) for sep in "._-#") + 1:]
    try:
        return (int(tail), sample_id)
    except ValueError:
        return (1 << 62, sample_id)


@pytest.mark.parametrize("sample_id", TRICKY_IDS)
def test_numeric_sort_key_follows_the_rule(sample_id: str):
    assert numeric_sort_key(sample_id) == _by_the_rule(sample_id)


def test_numeric_sort_key_orders_numbers_as_numbers():
    assert sorted(["x.dev.100", "x.dev.84", "x.dev.9"], key=numeric_sort_key) == ["x.dev.9", "x.dev.84", "x.dev.100"]
