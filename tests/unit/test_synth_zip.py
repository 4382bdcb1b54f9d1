"""Traces ZIPs read in memory: safe names only, bounded sizes, one warning per member not loaded."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path

import pytest

from loaders.formats import synth_zip
from loaders.formats.synth_zip import read_zip, read_zip_traces, unsafe_name

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "synth"
COMPACT = (FIX / "traces/compact/seed_0_trace.json").read_text()
FULL = (FIX / "traces/full/seed_0_trace.json").read_text()


def make_zip(members: dict[str, bytes | str], level: int = 6) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


@pytest.fixture(autouse=True)
def no_extraction(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is ever extracted to disk."""
    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("a ZIP member was extracted to disk")

    monkeypatch.setattr(zipfile.ZipFile, "extract", refuse)
    monkeypatch.setattr(zipfile.ZipFile, "extractall", refuse)


def test_fixture_zip_from_bytes_and_path() -> None:
    path = FIX / "eval-3f9c1a2b7d_traces.zip"
    for data in (path.read_bytes(), path):
        traces, warnings = read_zip_traces(data, "job/traces")
        assert sorted(traces) == [0, 1]
        assert traces[0]["schema_version"] == "3.0"  # compact
        assert traces[1]["session_id"] == "sess_z1"  # full
        assert warnings == []  # directory entry, __MACOSX junk and the manifest are not warnings
    contents = read_zip(path.read_bytes(), "job/traces")
    assert contents.manifest == {"job_id": "eval-3f9c1a2b7d", "seeds": [0, 1, 2], "format": "v3"}
    assert contents.members == {0: "eval-3f9c1a2b7d_traces/seed_0_trace.json", 1: "eval-3f9c1a2b7d_traces/seed_1_trace.json"}


@pytest.mark.parametrize(("name", "why"), [("../seed_3_trace.json", "contains '..'"), ("a/../../seed_3_trace.json", "contains '..'"),
                                           ("/etc/seed_3_trace.json", "absolute path"), ("C:/x/seed_3_trace.json", "absolute path"),
                                           ("..\\seed_3_trace.json", "contains '..'")])
def test_unsafe_member_names_refused(name: str, why: str) -> None:
    assert unsafe_name(name) == why
    traces, warnings = read_zip_traces(make_zip({"seed_0_trace.json": COMPACT, name: FULL}), "z.zip")
    assert sorted(traces) == [0]  # the valid seed still loads
    assert [(w.code, w.message, w.file) for w in warnings] == [
        ("unsafe_member", f"{name}: refused: unsafe member name ({why})", "z.zip")]


def test_zip_bomb_refused_by_ratio() -> None:
    bomb = b"{" + b" " * (20 * 1024 * 1024) + b"}"
    data = make_zip({"seed_0_trace.json": COMPACT, "seed_9_trace.json": bomb}, level=9)
    assert len(data) < 200_000
    traces, warnings = read_zip_traces(data, "bomb.zip")
    assert sorted(traces) == [0]
    assert len(warnings) == 1 and warnings[0].code == "zip_bomb"
    assert warnings[0].message.startswith("seed_9_trace.json: refused: declares 20971522 bytes uncompressed")


def test_lying_header_read_is_bounded() -> None:
    payload = (FULL * 40).encode()
    data = bytearray(make_zip({"seed_0_trace.json": COMPACT, "seed_4_trace.json": payload}))
    # shrink seed_4's declared uncompressed size in the central directory: the reader must stop there
    cd = data.index(b"PK\x01\x02", data.index(b"PK\x01\x02") + 4)
    struct.pack_into("<I", data, cd + 24, 1000)
    traces, warnings = read_zip_traces(bytes(data), "liar.zip")
    assert sorted(traces) == [0]
    assert [w.code for w in warnings] == ["bad_member"] and warnings[0].message.startswith("seed_4_trace.json: cannot read")


def test_total_uncompressed_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(synth_zip, "MAX_TOTAL_BYTES", len(COMPACT) + 10)
    traces, warnings = read_zip_traces(make_zip({"seed_0_trace.json": COMPACT, "seed_1_trace.json": COMPACT}), "big.zip")
    assert sorted(traces) == [0]
    assert warnings[0].code == "zip_too_large" and warnings[0].message.startswith("seed_1_trace.json: refused")


def test_bad_members_named() -> None:
    data = make_zip({
        "seed_0_trace.json": COMPACT,
        "seed_1_trace.json": '{"schema_version": "3.0", "event_',
        "notes.json": json.dumps({"hello": "world"}),
        "readme.md": "ignored silently",
        "trace_without_seed.json": json.dumps({"schema_version": "3.0", "event_history": []}),
        "other/seed_0_trace.json": COMPACT,
    })
    traces, warnings = read_zip_traces(data, "mixed.zip")
    assert sorted(traces) == [0]
    assert [(w.code, w.message.split(":")[0]) for w in warnings] == [
        ("bad_trace", "seed_1_trace.json"), ("not_a_trace", "notes.json"), ("no_seed", "trace_without_seed.json"),
        ("duplicate_seed", "other/seed_0_trace.json")]
    assert "not JSON" in warnings[0].message


def test_seed_from_metadata_when_name_has_none() -> None:
    traces, warnings = read_zip_traces(make_zip({"traces/anything.json": FULL}), "z")
    assert sorted(traces) == [0] and warnings == []


def test_not_a_zip() -> None:
    traces, warnings = read_zip_traces(b"PK not really", "broken.zip")
    assert traces == {} and warnings[0].code == "bad_zip" and warnings[0].file == "broken.zip"


def test_zipped_run_folder_keeps_results_and_report() -> None:
    contents = read_zip(make_zip({"run/eval_results.json": (FIX / "eval_results.json").read_text(),
                                  "run/eval_report.txt": (FIX / "eval_report.txt").read_text(),
                                  "run/seed_0_trace.json": FULL}), "run.zip")
    assert contents.results is not None and contents.results[0] == "run/eval_results.json"
    assert contents.report is not None and contents.report[1].startswith("Eval config\n")
    assert sorted(contents.traces) == [0] and contents.warnings == []
