"""The bad-input corpus: every way a source can be broken, the message a user sees, and proof
that every valid record in it still loads.

Each file case builds its input in a temp folder, loads it through the registry exactly as
the app and the CLI do, and checks (a) the warning or error text, (b) where it points (file
and line), (c) how many valid rows survived.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from loaders import resolve
from loaders.catalog import build_catalog
from loaders.errors import SourceError
from tests.conftest import FIXTURES
from tests.conftest_backend import KEY

RUN = "261120130000CORPUS00"
SPEC = json.dumps({"spec": {"completion_fns": ["m"], "eval_name": "c.dev.v0", "base_eval": "c", "split": "dev", "run_id": RUN,
                            "created_at": "2026-11-20 13:00:00"}})
REPORT = json.dumps({"final_report": {"accuracy": 0.5}, "run_id": RUN})


def match(eid: int, sid: int, ok: bool = True) -> str:
    return json.dumps({"run_id": RUN, "event_id": eid, "sample_id": f"c.dev.{sid}", "type": "match",
                       "data": {"correct": ok, "expected": "1", "picked": "1" if ok else None}})


def nano(record_type: str, **payload) -> str:
    return json.dumps({"timestamp": "2026-11-20T13:00:00+00:00", "record_type": record_type, "sample_id": "q1",
                       "group_id": "0", **payload})


GOOD = [SPEC, REPORT, match(0, 0), match(1, 1, False)]


@dataclass
class Case:
    id: str
    write: Callable[[Path], Path]  # builds the input, returns the source to load
    expect: str  # text the user sees (a warning or the error)
    rows: int | None  # valid rows that must still load (None: the source is unreadable as a whole)
    line: int | None = None  # the line the message must point at


def text_file(name: str, lines: list[str], tail: str = "\n") -> Callable[[Path], Path]:
    def write(tmp: Path) -> Path:
        path = tmp / name
        path.write_text("\n".join(lines) + tail, encoding="utf-8")
        return path
    return write


def bytes_file(name: str, data: bytes) -> Callable[[Path], Path]:
    def write(tmp: Path) -> Path:
        path = tmp / name
        path.write_bytes(data)
        return path
    return write


def folder(files: dict[str, str | bytes]) -> Callable[[Path], Path]:
    def write(tmp: Path) -> Path:
        root = tmp / "src"
        root.mkdir()
        for name, content in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return root
    return write


def zip_of(members: dict[str, bytes], *, compress: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compress) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


TRACE = (FIXTURES / "synth" / "traces" / "compact" / "seed_0_trace.json")
TRACE_BYTES = TRACE.read_bytes() if TRACE.exists() else (FIXTURES / "synth" / "bad_trace" / "seed_0_trace.json").read_bytes()
RESULTS = json.dumps({"config": {"app_id": "a", "policy_config": {"model": "m"}, "seeds": [0, 1]},
                      "results": [{"seed": 0, "score": 1.0, "error": None}, {"seed": 1, "score": 0.0, "error": None}]})

FILE_CASES = [
    # recorder logs: openai/evals
    Case("evals-truncated-last-line", text_file("t.jsonl", [*GOOD, match(2, 2)[:40]], tail=""), "truncated last line", 2, 5),
    Case("evals-not-json-line", text_file("t.jsonl", [*GOOD[:3], "{oops", *GOOD[3:]]), "not JSON", 2, 4),
    Case("evals-json-array-line", text_file("t.jsonl", [*GOOD, "[1, 2]"]), "a JSON list, not an object", 2, 5),
    Case("evals-json-scalar-line", text_file("t.jsonl", [*GOOD, "42"]), "a JSON int, not an object", 2, 5),
    Case("evals-bad-utf8", bytes_file("t.jsonl", ("\n".join(GOOD) + "\n").encode()
                                      + match(2, 2).encode().replace(b'"1"', b'"\xff"', 1) + b"\n"), "invalid UTF-8", 3, 5),
    Case("evals-unknown-event-type", text_file("t.jsonl", [*GOOD, json.dumps({"run_id": RUN, "event_id": 2, "sample_id": "c.dev.0",
                                                                              "type": "telemetry", "data": {}})]),
         "unknown type 'telemetry'", 2),
    Case("evals-missing-sample-id", text_file("t.jsonl", [*GOOD, json.dumps({"run_id": RUN, "event_id": 2, "type": "match",
                                                                            "data": {"correct": True}})]), "without sample_id", 2, 5),
    Case("evals-missing-event-id", text_file("t.jsonl", [*GOOD, json.dumps({"run_id": RUN, "sample_id": "c.dev.2", "type": "match",
                                                                           "data": {"correct": True}})]),
         "without an integer event_id", 3, 5),
    Case("evals-wrong-type-correct", text_file("t.jsonl", [*GOOD, match(2, 2).replace("true", '"yes"')]), "not true/false", 3, 5),
    Case("evals-wrong-type-data", text_file("t.jsonl", [*GOOD, json.dumps({"run_id": RUN, "event_id": 2, "sample_id": "c.dev.2",
                                                                          "type": "sampling", "data": "oops"})]),
         "sampling data is not an object", 3, 5),
    Case("evals-duplicate-event-ids", text_file("t.jsonl", [*GOOD, match(1, 1, True)]), "duplicate event id", 2),
    Case("evals-event-gap", text_file("t.jsonl", [*GOOD, match(9, 2)]), "event id(s) missing", 3),
    Case("evals-no-final-report", text_file("t.jsonl", [SPEC, match(0, 0)]), "no final report (run incomplete?)", 1),
    Case("evals-spec-only", text_file("t.jsonl", [SPEC]), "no final report", 0),
    Case("evals-second-spec", text_file("t.jsonl", [*GOOD, SPEC]), "a second spec line", 2, 5),
    Case("evals-utf8-bom", bytes_file("t.jsonl", b"\xef\xbb\xbf" + ("\n".join(GOOD) + "\n").encode()), "", 2),
    Case("evals-crlf", bytes_file("t.jsonl", ("\r\n".join(GOOD) + "\r\n").encode()), "", 2),
    Case("evals-huge-line", text_file("t.jsonl", [*GOOD, json.dumps({"run_id": RUN, "event_id": 2, "sample_id": "c.dev.2",
                                                                    "type": "extra", "data": {"blob": "x" * 300_000}})]), "", 3),
    Case("evals-empty-file", text_file("t.jsonl", [], tail=""), "unrecognised input (empty file)", None),
    Case("evals-blank-lines-only", text_file("t.jsonl", ["", "   ", ""]), "unrecognised input", None),
    Case("binary-with-jsonl-name", bytes_file("t.jsonl", b"\x1f\x8b\x08\x00" + bytes(range(256))), "unrecognised input", None),
    # recorder logs: nanoeval
    Case("nanoeval-unknown-record-type", text_file("n.jsonl", [nano("run_started", run_spec={"run_id": "R1"}), nano("match", correct=True),
                                                               nano("sample_completed"), nano("heartbeat")]), "heartbeat", 1),
    Case("nanoeval-no-final-report", text_file("n.jsonl", [nano("run_started", run_spec={"run_id": "R1"}), nano("match", correct=True),
                                                           nano("sample_completed")]), "no final report", 1),
    Case("nanoeval-truncated", text_file("n.jsonl", [nano("run_started", run_spec={"run_id": "R1"}), nano("match", correct=True),
                                                     nano("sample_completed"), nano("match", correct=False)[:30]], tail=""),
         "truncated last line", 1, 4),
    Case("nanoeval-garbage-convo", text_file("n.jsonl", [nano("run_started", run_spec={"run_id": "R1"}),
                                                         nano("extra", data={"type": "final_result_successful", "grade": {"score": 1.0},
                                                                             "convo": {"messages": [42, None, {"weird": 1}]}}),
                                                         nano("match", correct=True), nano("sample_completed")]), "", 1),
    Case("hostile-transcript-text", text_file("h.jsonl", [SPEC, json.dumps({
        "run_id": RUN, "event_id": 0, "sample_id": "c.dev.0", "type": "sampling",
        "data": {"prompt": "<script>alert(1)</script>", "sampled": ["$x$ ![i](http://e/x.png)"]}}), match(1, 0)]), "", 1),
    # synth traces, results, zips
    Case("synth-trace-not-json", folder({"seed_0_trace.json": TRACE_BYTES, "seed_1_trace.json": "{not json", "eval_results.json": RESULTS}),
         "seed_1_trace.json", 2),
    Case("synth-results-without-traces", folder({"eval_results.json": RESULTS}), "", 2),
    Case("synth-traces-without-results", folder({"seed_0_trace.json": TRACE_BYTES}), "no results file", 1),
    Case("synth-seed-sets-disagree", folder({"seed_0_trace.json": TRACE_BYTES, "seed_7_trace.json": TRACE_BYTES,
                                             "eval_results.json": RESULTS}), "disagree on the seed set", 3),
    Case("synth-nan-results", folder({"eval_results.json": RESULTS.replace('"score": 1.0', '"score": NaN')}), "nan", 2),
    Case("synth-zip-traversal", bytes_file("z.zip", zip_of({"../evil/seed_0_trace.json": TRACE_BYTES, "seed_1_trace.json": TRACE_BYTES})),
         "../evil/seed_0_trace.json", 1),
    Case("synth-zip-absolute", bytes_file("z.zip", zip_of({"/etc/seed_0_trace.json": TRACE_BYTES, "seed_1_trace.json": TRACE_BYTES})),
         "/etc/seed_0_trace.json", 1),
    Case("synth-zip-bomb", bytes_file("z.zip", zip_of({"seed_0_trace.json": b" " * 30_000_000, "seed_1_trace.json": TRACE_BYTES})),
         "seed_0_trace.json", 1),
    Case("synth-zip-member-not-a-trace", bytes_file("z.zip", zip_of({"seed_0_trace.json": b'{"hello": "world"}',
                                                                    "seed_1_trace.json": TRACE_BYTES})), "seed_0_trace.json", 1),
    Case("synth-zip-not-a-zip", bytes_file("z.zip", b"PK\x03\x04 this is not really a zip"), "z.zip", None),
    # folders
    Case("folder-with-unrelated-files", folder({"a.jsonl": "\n".join(GOOD) + "\n", "notes.txt": "hello", "data.csv": "a,b\n1,2\n",
                                                "img.png": b"\x89PNG\r\n"}), "notes.txt: skipped: unrecognised input", 2),
    Case("folder-empty", folder({}), "no eval logs, traces or results found", 0),
]


def load_everything(source: Path) -> tuple[int, list[str]]:
    """What the app does with a source: expand it, list runs, load rows. Returns (rows, every message)."""
    catalog = build_catalog([str(source)])
    messages = [f"{w.where()}: {w.message}" for ws in catalog.problems.values() for w in ws]
    n_rows = 0
    for entry in catalog.entries.values():
        messages += [f"{w.where()}: {w.message}" for w in entry.run.warnings]
        rows = resolve(entry.leaf).load_samples(entry.native_run_id)
        n_rows += len(rows)
    return n_rows, messages


def test_the_corpus_is_big_enough():
    assert len(FILE_CASES) + len(BACKEND_CASES) >= 30


@pytest.mark.parametrize("case", FILE_CASES, ids=[c.id for c in FILE_CASES])
def test_file_case(case: Case, tmp_path: Path):
    source = case.write(tmp_path)
    if case.rows is None:
        with pytest.raises(SourceError) as exc:
            resolve(str(source)).list_runs()
        assert case.expect in str(exc.value)
        assert str(source.name) in str(exc.value)
        n_rows, messages = load_everything(source)  # and the app shows it instead of crashing
        assert n_rows == 0 and any(case.expect in m for m in messages)
        return
    n_rows, messages = load_everything(source)
    assert n_rows == case.rows, messages
    if case.expect:
        hits = [m for m in messages if case.expect in m]
        assert hits, f"expected {case.expect!r} in {messages}"
        if case.line is not None:
            assert any(f":{case.line}:" in m for m in hits), hits


def test_hostile_text_is_kept_literally(tmp_path: Path):
    source = FILE_CASES[[c.id for c in FILE_CASES].index("hostile-transcript-text")].write(tmp_path)
    loader = resolve(str(source))
    run = loader.list_runs().runs[0]
    transcript = loader.load_transcript(run.run_id, "c.dev.0")
    texts = [m.text for m in transcript.messages]
    assert "<script>alert(1)</script>" in texts and "$x$ ![i](http://e/x.png)" in texts


BACKEND_CASES = ["401", "403", "500", "malformed", "slow", "no_list", "list_405", "unknown_job", "refused"]


@pytest.mark.parametrize("mode", BACKEND_CASES)
def test_backend_case(mode: str, fake, make_loader):
    """Backend faults: the message names the backend/URL and status; jobs already loaded stay (stale)."""
    from loaders.sources.backend import BackendLoader

    if mode == "refused":
        loader = BackendLoader("http://127.0.0.1:9", api_key=KEY, backoff=0.001, connect_timeout=0.5)
        with pytest.raises(SourceError) as exc:
            loader.list_runs()
        assert "connection refused" in str(exc.value) and KEY not in str(exc.value)
        return
    if mode == "unknown_job":
        fake.fault("no_list")
        loader = make_loader(f"{fake.url}#eval-3f9c1a2b7d,eval-nope")
        listing = loader.list_runs()
        assert [r.run_id for r in listing.runs] == ["eval-3f9c1a2b7d"]
        assert any("no such job" in w.message for w in listing.warnings)
        return
    loader = make_loader(read_timeout=0.3)
    before = loader.list_runs()
    assert len(before.runs) >= 5
    fake.fault(mode, **({"delay": 1.0} if mode == "slow" else {}))
    if mode in ("no_list", "list_405"):
        loader = make_loader(f"{fake.url}#eval-3f9c1a2b7d")
        listing = loader.list_runs()
        assert [r.run_id for r in listing.runs] == ["eval-3f9c1a2b7d"] and not listing.warnings
        return
    after = loader.list_runs()  # the loaded jobs stay, marked stale, with the reason
    assert [r.run_id for r in after.runs] == [r.run_id for r in before.runs]
    stale = [w.message for r in after.runs for w in r.warnings if "stale since" in w.message]
    assert stale, [w.message for r in after.runs for w in r.warnings]
    expected = {"401": "was refused (HTTP 401", "403": "was refused (HTTP 403", "500": "HTTP 500", "malformed": "not JSON",
                "slow": "timed out"}[mode]
    assert expected in stale[0] and fake.url in stale[0] and KEY not in stale[0]
