from __future__ import annotations

import pytest

from dashboard.uploads import safe_name, store


@pytest.mark.parametrize(("name", "expected"), [
    ("run.jsonl", "run.jsonl"), ("../../etc/passwd", "passwd"), ("/abs/path/x.zip", "x.zip"),
    ("..\\..\\win.log", "win.log"), (".hidden.jsonl", "hidden.jsonl"), ("", "upload"), ("a b<c>.json", "a_b_c_.json"),
])
def test_safe_name(name, expected):
    assert safe_name(name) == expected


def test_store_stays_in_folder_and_never_overwrites(tmp_path):
    first = store(tmp_path, "../evil.jsonl", b"1")
    second = store(tmp_path, "evil.jsonl", b"2")
    assert first == tmp_path / "evil.jsonl" and second == tmp_path / "evil-2.jsonl"
    assert first.read_bytes() == b"1" and second.read_bytes() == b"2"
    assert sorted(p.name for p in tmp_path.parent.iterdir() if p.name.startswith("evil")) == []
