"""The on-disk cache of parsed logs: a hit gives identical rows, a change or a damaged entry means a re-parse."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from loaders import parsed_cache
from loaders.formats import evals_log, nanoeval_log
from loaders.sources.recorder import RecorderLoader
from tests.conftest import EXAMPLES, FIXTURES


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(parsed_cache.ENV, str(folder))
    return folder


def snapshot(path: Path) -> tuple:
    loader = RecorderLoader(str(path))
    runs, warnings = loader._scan()
    return (repr([r.run for r in runs]), repr([r.rows for r in runs]), repr([sorted(r.spans.items()) for r in runs]), repr(warnings))


def forbid_parsing(monkeypatch) -> None:
    def boom(*_a, **_k):
        raise AssertionError("re-parsed although the cache holds this version")
    monkeypatch.setattr(evals_log, "scan_file", boom)
    monkeypatch.setattr(nanoeval_log, "scan_file", boom)


@pytest.mark.parametrize("name", ["compare/arith_gpt-4o.jsonl", "recorder/nanoeval_with_ids_3_attempts.jsonl",
                                  "recorder/nanoeval_generated_agent_full_with-retry.jsonl",
                                  "recorder/evals_generated_all-event-types.jsonl"])
def test_cache_hit_gives_identical_rows(cache: Path, tmp_path: Path, monkeypatch, name: str):
    log = tmp_path / Path(name).name
    shutil.copy(EXAMPLES / name, log)
    first = snapshot(log)
    assert len(list(cache.glob("*.parquet"))) == 2
    forbid_parsing(monkeypatch)
    assert snapshot(log) == first  # a new loader, as after a restart
    loader = RecorderLoader(str(log))
    run = loader.list_runs().runs[0]
    row = loader.load_samples(run.run_id)[0]
    assert loader.load_transcript(run.run_id, row.sample_id, row.attempt).items  # spans come back too


def test_changed_file_is_parsed_again(cache: Path, tmp_path: Path):
    log = tmp_path / "run.jsonl"
    shutil.copy(EXAMPLES / "compare" / "arith_gpt-4o.jsonl", log)
    before = RecorderLoader(str(log))
    n = len(before.load_samples(before.list_runs().runs[0].run_id))
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:-2]) + "\n")  # the last sample's two events gone
    st = log.stat()
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    after = RecorderLoader(str(log))
    assert len(after.load_samples(after.list_runs().runs[0].run_id)) == n - 1
    assert len(list(cache.glob("*.parquet"))) == 2  # the old version's entry was swept


@pytest.mark.parametrize("damage", ["garbage_rows", "truncated_rows", "garbage_spans", "foreign_entry"])
def test_damaged_cache_is_ignored_and_rebuilt(cache: Path, tmp_path: Path, damage: str):
    log = tmp_path / "run.jsonl"
    shutil.copy(FIXTURES / "evals" / "report_on_line2.jsonl", log)
    first = snapshot(log)
    rows_file = next(cache.glob("*.rows.parquet"))
    spans_file = next(cache.glob("*.spans.parquet"))
    if damage == "garbage_rows":
        rows_file.write_bytes(b"not parquet at all")
    elif damage == "truncated_rows":
        rows_file.write_bytes(rows_file.read_bytes()[:-40])
    elif damage == "garbage_spans":
        spans_file.write_bytes(b"PAR1 nonsense PAR1")
    else:  # another log's entry under this log's name: the identity stored inside does not match
        other = tmp_path / "other.jsonl"
        shutil.copy(EXAMPLES / "compare" / "arith_gpt-4o.jsonl", other)
        snapshot(other)
        foreign = next(p for p in cache.glob("*.rows.parquet") if p != rows_file)
        shutil.copy(foreign, rows_file)
    assert snapshot(log) == first
    assert snapshot(log) == first  # rebuilt entry is good again


def test_disabled_cache_writes_nothing(tmp_path: Path, monkeypatch):
    monkeypatch.setenv(parsed_cache.ENV, "off")
    assert parsed_cache.cache_dir() is None
    log = tmp_path / "run.jsonl"
    shutil.copy(EXAMPLES / "compare" / "arith_gpt-4o.jsonl", log)
    snapshot(log)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.jsonl"]


def test_column_round_trip_keeps_each_rows_values():
    """Constant columns are shared through a template: values equal but not identical (-0.0 / 0.0) stay distinct,
    and each row keeps its own metrics dict."""
    from loaders.formats.index import make_row, numeric_sort_key

    rows = [make_row(run_id="r", sample_id=f"s.{i}", attempt=0, sort_key=numeric_sort_key(f"s.{i}"), score=score,
                     correct_rule="same", flags=(), metrics={}) for i, score in enumerate([0.0, -0.0, 0.0])]
    rows.append(make_row(run_id="r", sample_id="x", attempt=0, sort_key=(7, "other"), score=None, correct_rule="same",
                         flags=("a", "b"), metrics={"k": [1, 2]}))
    run_nos, back = parsed_cache._rows_of(parsed_cache._row_table(rows, [0] * len(rows)))
    assert run_nos == [0] * len(rows)
    assert [repr(r) for r in back] == [repr(r) for r in rows]
    assert back[0].metrics is not back[1].metrics
    back[0].metrics["new"] = 1
    assert back[1].metrics == {}


def forbid_row_reads(monkeypatch) -> None:
    def boom(*_a, **_k):
        raise AssertionError("rows were read to list runs")
    monkeypatch.setattr(parsed_cache, "_rows_of", boom)


@pytest.mark.parametrize("name", ["compare/arith_gpt-4o.jsonl", "recorder/nanoeval_generated_agent_full_with-retry.jsonl",
                                  "recorder/nanoeval_with_ids_3_attempts.jsonl"])
def test_restart_lists_runs_and_figures_without_reading_rows(cache: Path, tmp_path: Path, monkeypatch, name: str):
    from loaders import query

    log = tmp_path / Path(name).name
    shutil.copy(EXAMPLES / name, log)
    first = RecorderLoader(str(log))
    expected = {r.run_id: query.row_figures(r, first.load_samples(r.run_id)) for r in first.list_runs().runs}
    forbid_parsing(monkeypatch)
    with monkeypatch.context() as m:
        forbid_row_reads(m)
        again = RecorderLoader(str(log))  # as after a restart
        assert {r.run_id: again.load_figures(r.run_id, r) for r in again.list_runs().runs} == expected
    run_id = next(iter(expected))
    assert repr(again.load_samples(run_id)) == repr(first.load_samples(run_id))  # rows still come, when asked for


def test_stale_figures_are_recomputed_not_trusted(cache: Path, tmp_path: Path, monkeypatch):
    from loaders import query

    log = tmp_path / "run.jsonl"
    shutil.copy(EXAMPLES / "compare" / "arith_gpt-4o.jsonl", log)
    first = RecorderLoader(str(log))
    run = first.list_runs().runs[0]
    expected = query.row_figures(run, first.load_samples(run.run_id))
    monkeypatch.setattr(parsed_cache, "_figures_version", lambda: "query.py was edited since")
    forbid_parsing(monkeypatch)
    again = RecorderLoader(str(log))
    assert again._run(run.run_id).figures is None
    assert again.load_figures(run.run_id, run) == expected


def test_damaged_row_data_behind_a_good_header_falls_back_to_parsing(cache: Path, tmp_path: Path, caplog):
    log = tmp_path / "run.jsonl"
    shutil.copy(EXAMPLES / "compare" / "arith_gpt-4o.jsonl", log)
    first = RecorderLoader(str(log))
    run_id = first.list_runs().runs[0].run_id
    rows = repr(first.load_samples(run_id))
    rows_file = next(cache.glob("*.rows.parquet"))
    data = bytearray(rows_file.read_bytes())
    data[8:808] = b"\xff" * 800  # column pages, not the footer: the header still reads fine
    rows_file.write_bytes(bytes(data))
    again = RecorderLoader(str(log))
    assert again.list_runs().runs[0].run_id == run_id
    assert repr(again.load_samples(run_id)) == rows
    assert "parsing" in caplog.text and "again" in caplog.text  # the damage was found, and said so in the log
    assert repr(RecorderLoader(str(log)).load_samples(run_id)) == rows  # and the entry was written again


def test_size_cap_drops_the_least_recently_used_entry(cache: Path, tmp_path: Path, monkeypatch):
    logs = []
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        log = tmp_path / name
        shutil.copy(EXAMPLES / "compare" / "arith_gpt-4o.jsonl", log)
        logs.append(log)
    snapshot(logs[0])
    snapshot(logs[1])  # written after a: by write time, a is the older entry
    one_entry = sum(p.stat().st_size for p in cache.glob("*.parquet")) / 2
    for rows_file in cache.glob("*.rows.parquet"):
        os.utime(rows_file, (1_000_000, 1_000_000))  # same age, long ago: only the hits below order them
    snapshot(logs[1])
    snapshot(logs[0])  # hits: b used, then a; so b is now the least recently used
    monkeypatch.setenv(parsed_cache.MAX_ENV, str(2.5 * one_entry / (1 << 20)))  # room for two entries, not three
    first = snapshot(logs[2])  # writing c must drop b
    assert len(list(cache.glob("*.rows.parquet"))) == 2
    forbid_parsing(monkeypatch)
    assert snapshot(logs[0]) and snapshot(logs[2]) == first  # a and c still hit
    with pytest.raises(AssertionError, match="re-parsed"):
        snapshot(logs[1])  # b was dropped: it would be parsed again


def test_an_entry_larger_than_the_cap_is_still_kept(cache: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv(parsed_cache.MAX_ENV, "0")
    log = tmp_path / "run.jsonl"
    shutil.copy(EXAMPLES / "compare" / "arith_gpt-4o.jsonl", log)
    first = snapshot(log)
    forbid_parsing(monkeypatch)
    assert snapshot(log) == first
