from __future__ import annotations

from datetime import UTC, datetime

import pytest

from loaders.timestamps import parse_duration_seconds, parse_timestamp, run_id_timestamp

UTC = UTC
EXPECTED = datetime(2025, 11, 22, 13, 8, 1, 123456, tzinfo=UTC)


@pytest.mark.parametrize("value", [
    "2025-11-22T13:08:01.123456+00:00", "2025-11-22 13:08:01.123456+00:00", "2025-11-22T13:08:01.123456Z",
    "2025-11-22 13:08:01.123456", 1763816881.123456, 1763816881123.456,
    "datetime.datetime(2025, 11, 22, 13, 8, 1, 123456, tzinfo=datetime.timezone.utc)",
    "datetime.datetime(2025, 11, 22, 14, 8, 1, 123456, tzinfo=datetime.timezone(datetime.timedelta(seconds=3600)))",
])
def test_every_form_is_aware_utc(value):
    parsed = parse_timestamp(value)
    assert parsed is not None and parsed.tzinfo is not None
    assert abs((parsed - EXPECTED).total_seconds()) < 0.001


def test_repr_without_seconds_and_garbage():
    assert parse_timestamp("datetime.datetime(2025, 11, 22, 13, 8)") == datetime(2025, 11, 22, 13, 8, tzinfo=UTC)
    assert parse_timestamp("yesterday") is None and parse_timestamp(None) is None


def test_durations():
    assert parse_duration_seconds("P0DT0H0M12.500000S") == 12.5
    assert parse_duration_seconds("PT12.5S") == 12.5
    assert parse_duration_seconds(3) == 3.0
    assert parse_duration_seconds("P") is None


def test_run_id_stamp():
    assert run_id_timestamp("2304181349417WZBC5D5") == datetime(2023, 4, 18, 13, 49, 41, tzinfo=UTC)
    assert run_id_timestamp("eval-3f9c") is None
