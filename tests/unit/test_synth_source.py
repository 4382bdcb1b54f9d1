"""The synth source kind end to end: detection, runs, rows, transcripts, and every bad input of issue 4."""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from loaders.query import summarize
from loaders.registry import resolve
from loaders.sources.folder import FolderLoader
from loaders.sources.synth import SynthLoader

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "synth"
EXAMPLES = ROOT / "examples"


def only_run(loader: SynthLoader):
    listing = loader.list_runs()
    assert len(listing.runs) == 1, listing.warnings
    return listing.runs[0]


def codes(run) -> dict[str, str]:
    return {w.code: w.message for w in run.warnings}


def test_run_folder_with_results_report_and_traces() -> None:
    loader = resolve(str(EXAMPLES / "synth" / "banking77-gpt-4o-mini"))
    assert isinstance(loader, SynthLoader)
    run = only_run(loader)
    assert (run.source_kind, run.eval_name, run.model, run.status) == ("synth", "banking77", "gpt-4o-mini", "completed")
    assert run.run_id.startswith("synth-banking77-gpt-4o-mini-") and len(run.run_id) == len("synth-banking77-gpt-4o-mini-") + 12
    assert run.config["provider"] == "openai" and "modification time of eval_results.json" in run.config["created_at_source"]
    assert run.report_label == "synth text report avg row" and run.reported_metrics["score"] == 0.5
    assert codes(run) == {"no_trace_for_errors": "seed(s) 2 failed and have no trace (normal: the task app returned none)"}
    rows = loader.load_samples(run.run_id)
    assert [(r.sample_id, r.score, r.tokens_total, r.has_transcript) for r in rows] == [
        ("0", 1.0, 412, True), ("1", 0.0, 398, True), ("2", None, None, False)]
    assert rows[0].tokens_in == 394 and rows[1].tokens_in == 380  # results and traces agree: split filled in
    summary = summarize(run, rows)
    assert summary["score_mean"] == 0.5 and summary["reported"] == {"metric": "score", "value": 0.5,
                                                                     "label": "synth text report avg row"}
    assert summary["tokens_total"] == 810 and summary["n_errors"] == 1


def test_mean_score_equals_the_cli_avg_row() -> None:
    avg_line = next(line for line in (FIX / "stdout_table.txt").read_text().splitlines() if line.startswith("avg "))
    avg_score = float(avg_line.split(" | ")[1])
    loader = SynthLoader(str(FIX / "results_only" / "eval_results.json"))
    run = only_run(loader)
    assert summarize(run, loader.load_samples(run.run_id))["score_mean"] == avg_score == 0.5
    assert run.report_label == "synth CLI avg row" and run.reported_metrics["score"] == 0.5


def test_run_id_is_stable_and_follows_content(tmp_path: Path) -> None:
    src = tmp_path / "r" / "eval_results.json"
    src.parent.mkdir()
    shutil.copy(FIX / "eval_results.json", src)
    first = only_run(SynthLoader(str(src.parent))).run_id
    assert only_run(SynthLoader(str(src.parent))).run_id == first
    shutil.copy(FIX / "traces/full/seed_0_trace.json", src.parent / "seed_0_trace.json")
    assert only_run(SynthLoader(str(src.parent))).run_id == first  # attaching traces keeps the id
    src.write_text(src.read_text().replace("1834.2281", "1834.5"))
    assert only_run(SynthLoader(str(src.parent))).run_id != first


def test_second_example_computes_tokens_and_shows_transcripts() -> None:
    loader = resolve(str(EXAMPLES / "synth" / "banking77-gpt-4.1-mini"))
    run = only_run(loader)
    assert run.model == "gpt-4.1-mini" and run.dialect == "synth-mixed"
    assert codes(run)["tokens_computed"] == ("tokens computed by evaldash from the traces' LM events for seed(s) 0, 1, 2 "
                                             "(the results file has none)")
    rows = loader.load_samples(run.run_id)
    assert [(r.sample_id, r.tokens_total, r.tokens_computed) for r in rows] == [("0", 326, True), ("1", 325, True), ("2", 718, True)]
    assert summarize(run, rows)["score_mean"] == pytest.approx(2 / 3)
    t = loader.load_transcript(run.run_id, "2")
    assert [i.kind for i in t.items].count("model_call") == 2 and len(t.messages) == 5
    assert (t.grade.score, t.grade.correct) == (0.0, False)  # score from the results, correct from the trace
    compact = loader.load_transcript(run.run_id, "1")
    assert compact.items[2].kind == "model_call" and compact.grade.score == 1.0


def test_examples_folder_expands_without_unrecognised_synth_files() -> None:
    leaves, warnings = FolderLoader(str(EXAMPLES)).children()
    synth_leaves = sorted(Path(p).name for p in leaves if "synth" in p and resolve(p).kind == "synth")
    assert synth_leaves == ["banking77-gpt-4.1-mini", "banking77-gpt-4o-mini"]
    assert [w.file for w in warnings if "/synth/banking77" in (w.file or "")] == []


def test_folder_of_run_folders_is_not_synth(tmp_path: Path) -> None:
    for name in ("a", "b"):
        shutil.copytree(FIX / "traces_only", tmp_path / name)
    assert not SynthLoader.handles(str(tmp_path))
    assert isinstance(resolve(str(tmp_path)), FolderLoader)
    leaves, _w = FolderLoader(str(tmp_path)).children()
    assert sorted(Path(p).name for p in leaves) == ["a", "b"]


def test_traces_only() -> None:
    loader = resolve(str(FIX / "traces_only"))
    run = only_run(loader)
    assert run.status == "unknown" and run.reported_metrics == {} and run.eval_name == "banking77"
    assert "outcome scores are not available" in codes(run)["no_results"]
    rows = loader.load_samples(run.run_id)
    assert [(r.sample_id, r.score, r.tokens_total, r.flags) for r in rows] == [
        ("0", 1.0, 330, ("outcome_unavailable",)), ("1", None, 398, ("outcome_unavailable",))]


def test_report_only() -> None:
    loader = resolve(str(FIX / "report_only" / "eval_report.txt"))
    assert isinstance(loader, SynthLoader)
    run = only_run(loader)
    assert codes(run)["rounded_values"].startswith("values parsed from the text report are rounded to 4 decimals")
    rows = loader.load_samples(run.run_id)
    assert [(r.sample_id, r.score, r.cost_usd) for r in rows] == [("0", 1.0, 0.0001), ("1", 0.0, 0.0001), ("2", None, None)]
    assert summarize(run, rows)["score_mean"] == 0.5 and run.model == "gpt-4o-mini"


@pytest.mark.parametrize("rel", ["traces/compact/seed_0_trace.json", "traces/full/seed_0_trace.json",
                                 "traces/wrapped/seed_0_trace.json"])
def test_single_trace_file(rel: str) -> None:
    loader = resolve(str(FIX / rel))
    assert isinstance(loader, SynthLoader)
    run = only_run(loader)
    rows = loader.load_samples(run.run_id)
    assert [(r.sample_id, r.tokens_total) for r in rows] == [("0", 330)]
    assert len(loader.load_transcript(run.run_id, "0").messages) == 3


def test_trace_not_json_other_seeds_load() -> None:
    loader = resolve(str(FIX / "bad_trace"))
    run = only_run(loader)
    bad = next(w for w in run.warnings if w.code == "bad_trace")
    assert bad.file.endswith("bad_trace/seed_1_trace.json") and bad.message.startswith("trace skipped: not JSON")
    assert [r.sample_id for r in loader.load_samples(run.run_id)] == ["0"]


def test_seed_sets_disagree_and_missing_seeds() -> None:
    loader = resolve(str(FIX / "seed_mismatch"))
    run = only_run(loader)
    found = codes(run)
    assert "only in the results: 1, 2 (failed, so no trace expected: 2); only in the traces: 5" in found["seed_mismatch"]
    assert found["missing_seeds"] == "config.seeds lists seed(s) 3 but there is no result row or trace for them"
    assert [r.sample_id for r in loader.load_samples(run.run_id)] == ["0", "1", "2", "5"]


def test_nan_results_load() -> None:
    loader = resolve(str(FIX / "nan_results"))
    run = only_run(loader)
    rows = loader.load_samples(run.run_id)
    assert [r.score for r in rows] == [None, 1.0, 0.0]
    assert summarize(run, rows)["score_mean"] == 0.5
    assert "possibly_misreported" in rows[2].flags


def test_zip_source_and_transcript_without_writing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("extracted to disk")

    monkeypatch.setattr(zipfile.ZipFile, "extract", refuse)
    monkeypatch.setattr(zipfile.ZipFile, "extractall", refuse)
    src = tmp_path / "eval-3f9c1a2b7d_traces.zip"
    shutil.copy(FIX / src.name, src)
    before = sorted(os.listdir(tmp_path))
    loader = resolve(str(src))
    assert isinstance(loader, SynthLoader)
    run = only_run(loader)
    assert run.config["manifest"]["job_id"] == "eval-3f9c1a2b7d"
    assert codes(run)["missing_seeds"] == "manifest seeds lists seed(s) 2 but there is no result row or trace for them"
    assert [r.sample_id for r in loader.load_samples(run.run_id)] == ["0", "1"]
    t = loader.load_transcript(run.run_id, "1")
    assert t.items[-1].kind == "environment" and t.grade.score == 0.0
    assert sorted(os.listdir(tmp_path)) == before


def test_zip_with_unsafe_members_and_bomb(tmp_path: Path) -> None:
    buf = io.BytesIO()
    compact = (FIX / "traces/compact/seed_0_trace.json").read_text()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("seed_0_trace.json", compact)
        zf.writestr("../seed_1_trace.json", compact)
        zf.writestr("/abs/seed_2_trace.json", compact)
        zf.writestr("seed_3_trace.json", b"[" + b"0," * (4 * 1024 * 1024) + b"0]")
        zf.writestr("notes.json", json.dumps({"not": "a trace"}))
    src = tmp_path / "t.zip"
    src.write_bytes(buf.getvalue())
    loader = SynthLoader(str(src))
    run = only_run(loader)
    by_code = {w.code: w.message for w in run.warnings}
    assert by_code["unsafe_member"] == "/abs/seed_2_trace.json: refused: unsafe member name (absolute path)"
    assert [w.message.split(":")[0] for w in run.warnings if w.code == "unsafe_member"] == ["../seed_1_trace.json",
                                                                                           "/abs/seed_2_trace.json"]
    assert by_code["zip_bomb"].startswith("seed_3_trace.json: refused")
    assert by_code["not_a_trace"].startswith("notes.json:")
    assert [r.sample_id for r in loader.load_samples(run.run_id)] == ["0"]
    assert sorted(os.listdir(tmp_path)) == ["t.zip"]


def test_empty_or_junk_inputs_are_not_claimed(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "data.json").write_text('{"a": 1}')
    assert not SynthLoader.handles(str(tmp_path))
    assert not SynthLoader.handles(str(tmp_path / "data.json"))
    assert not SynthLoader.handles(str(tmp_path / "notes.txt"))
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    assert not SynthLoader.handles(str(bad))


def test_results_with_traces_subfolder(tmp_path: Path) -> None:
    shutil.copy(FIX / "eval_results.json", tmp_path / "eval_results.json")
    (tmp_path / "traces").mkdir()
    shutil.copy(FIX / "traces/compact/seed_0_trace.json", tmp_path / "traces" / "seed_0_trace.json")
    (tmp_path / "traces" / "seed_1_trace.json").write_text("not json")
    loader = resolve(str(tmp_path))
    run = only_run(loader)
    rows = loader.load_samples(run.run_id)
    assert [(r.sample_id, r.has_transcript) for r in rows] == [("0", True), ("1", False), ("2", False)]
    assert next(w for w in run.warnings if w.code == "bad_trace").file.endswith("traces/seed_1_trace.json")
    assert run.config["files"]["traces"] == [str(tmp_path / "traces" / "seed_0_trace.json")]


def test_run_id_does_not_depend_on_where_the_folder_lives(tmp_path):
    """A pasted deep link must open the same run on a teammate's machine or another checkout."""
    import shutil

    from loaders import resolve
    from tests.conftest import EXAMPLES

    ids = []
    for place in ("a", "b/deeper"):
        target = tmp_path / place / "banking77-gpt-4o-mini"
        shutil.copytree(EXAMPLES / "synth" / "banking77-gpt-4o-mini", target)
        ids.append(resolve(str(target)).list_runs().runs[0].run_id)
    assert ids[0] == ids[1] == "synth-banking77-gpt-4o-mini-2e114df9407b"
