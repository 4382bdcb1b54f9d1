"""Timestamps in every form the sources write, normalised to aware UTC."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

_REPR = re.compile(
    r"^datetime\.datetime\((\d+), (\d+), (\d+), (\d+), (\d+)(?:, (\d+))?(?:, (\d+))?(?:, tzinfo=(.+))?\)$"
)
_TZ_OFFSET = re.compile(r"^datetime\.timezone\(datetime\.timedelta\((?:seconds=)?(-?\d+)(?:, (?:seconds=)?(-?\d+))?\)\)$")
_ISO_DURATION = re.compile(
    r"^P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)


def parse_timestamp(value: Any) -> datetime | None:
    """Epoch seconds (or ms), ISO-8601 in its variants, or a Python repr; None if unparseable."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str):
        return None
    text = value.strip()
    match = _REPR.match(text)
    if match:
        return _from_repr(match)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _from_repr(match: re.Match[str]) -> datetime | None:
    year, month, day, hour, minute, second, micro, tz = match.groups()
    tzinfo: timezone = UTC
    if tz and tz != "datetime.timezone.utc":
        offset = _TZ_OFFSET.match(tz)
        if offset:
            secs = int(offset.group(1)) * (86400 if offset.group(2) else 1) + int(offset.group(2) or 0)
            tzinfo = timezone(timedelta(seconds=secs))
    try:
        local = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0), int(micro or 0), tzinfo)
    except ValueError:
        return None
    return local.astimezone(UTC)


def parse_duration_seconds(value: Any) -> float | None:
    """ISO-8601 periods (`P0DT0H0M12.5S`, `PT12.5S`) or plain seconds."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        return float(text)
    except ValueError:
        pass
    match = _ISO_DURATION.match(text)
    if not match or text in ("P", "PT"):
        return None
    d, h, m, s = (float(match.group(k) or 0) for k in ("d", "h", "m", "s"))
    return d * 86400 + h * 3600 + m * 60 + s


def run_id_timestamp(run_id: str) -> datetime | None:
    """evals and nanoeval run ids start with a UTC `%y%m%d%H%M%S` stamp."""
    if len(run_id) < 12 or not run_id[:12].isdigit():
        return None
    try:
        return datetime.strptime(run_id[:12], "%y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None
