"""Which loader reads what, and what happens when none does."""

from __future__ import annotations

import pytest

from loaders import resolve
from loaders.catalog import build_catalog, expand
from loaders.errors import SourceError
from loaders.registry import split_kind
from tests.conftest import FIXTURES


def test_unknown_file_names_the_file():
    with pytest.raises(SourceError) as exc:
        resolve(str(FIXTURES / "mixed_folder" / "notes.txt"))
    assert "notes.txt" in str(exc.value) and "unrecognised input" in str(exc.value)


def test_missing_path():
    with pytest.raises(SourceError, match="no such file or folder"):
        resolve("/definitely/not/here.jsonl")


def test_empty_file_is_unrecognised():
    with pytest.raises(SourceError, match="empty file"):
        resolve(str(FIXTURES / "evals" / "empty.jsonl"))


def test_forced_kind():
    assert split_kind("recorder:/x/y.txt") == ("recorder", "/x/y.txt")
    assert split_kind("http://host:8000") == ("auto", "http://host:8000")
    loader = resolve("recorder:" + str(FIXTURES / "evals" / "report_on_line2.jsonl"))
    assert loader.kind == "recorder"


def test_folder_with_unrelated_files_loads_the_logs_and_names_the_rest():
    leaves, warnings = expand(str(FIXTURES / "mixed_folder"))
    assert [leaf.rsplit("/", 1)[-1] for leaf in leaves] == ["old_spec_report_last.jsonl", "report_on_line2.jsonl"]
    assert sorted(w.file.rsplit("/", 1)[-1] for w in warnings) == ["data.csv", "notes.txt"]


def test_catalog_makes_run_ids_unique_and_keeps_failures():
    same = str(FIXTURES / "evals" / "report_on_line2.jsonl")
    catalog = build_catalog([same, str(FIXTURES / "mixed_folder"), "/nope"])
    ids = list(catalog.entries)
    assert ids.count("261120100000AAAAAAAA") == 1 and "261120100000AAAAAAAA~2" in ids
    assert catalog.entries["261120100000AAAAAAAA~2"].native_run_id == "261120100000AAAAAAAA"
    assert catalog.problems["/nope"][0].message == "no such file or folder"
