"""Dropping a file in the browser opens it as a run, with the same loaders."""

from __future__ import annotations

from tests.conftest import FIXTURES


def test_uploaded_log_becomes_a_run(make_app):
    at = make_app(str(FIXTURES / "evals" / "report_mid_file.jsonl"))
    at.run()
    data = (FIXTURES / "evals" / "report_on_line2.jsonl").read_bytes()
    at.sidebar.file_uploader(key="sources.upload").upload("../../tricky name.jsonl", data, "application/json").run()
    assert not at.exception
    runs = sorted(at.dataframe[0].value["run_id"])
    assert runs == ["261120100000AAAAAAAA", "261120110000MIDREPRT"]
    added = at.session_state["sources.added"]
    assert added[-1].endswith("/tricky_name.jsonl") and "evaldash-upload-" in added[-1]
