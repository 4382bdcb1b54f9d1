"""On a shared URL, a viewer can only point the server at folders it already serves."""

from __future__ import annotations

from pathlib import Path

from dashboard.config import allowed_roots, is_allowed_source
from tests.conftest import FIXTURES


def test_roots_default_to_the_configured_folders(tmp_path):
    log = tmp_path / "logs" / "a.jsonl"
    log.parent.mkdir()
    log.write_text("{}")
    roots = allowed_roots([str(tmp_path / "logs"), str(log), "http://backend:8000"], environ={})
    assert roots == [(tmp_path / "logs").resolve(), (tmp_path / "logs").resolve()]
    assert is_allowed_source(str(tmp_path / "logs" / "b.jsonl"), roots)
    assert not is_allowed_source(str(tmp_path / "logs" / ".." / "secret.txt"), roots)
    assert not is_allowed_source("/etc/passwd", roots)
    assert is_allowed_source("http://other-backend:9000#job", roots)
    assert allowed_roots(["x"], environ={"EVALDASH_ALLOWED_ROOTS": "/data,/srv"}) == [Path("/data"), Path("/srv")]


def test_a_link_cannot_open_a_file_outside_the_served_folders(make_app):
    at = make_app(str(FIXTURES / "evals" / "report_on_line2.jsonl"), source="/etc/passwd")
    at.run()
    assert not at.exception
    failed = "\n".join(c.value for c in at.expander[0].code)
    assert "/etc/passwd: not opened: outside the folders this dashboard serves" in failed
    assert "root:" not in failed  # no preview of the file


def test_a_link_can_add_a_sibling_log(make_app):
    at = make_app(str(FIXTURES / "evals" / "report_on_line2.jsonl"), source=str(FIXTURES / "evals" / "report_mid_file.jsonl"))
    at.run()
    assert sorted(at.dataframe[0].value["run_id"]) == ["261120100000AAAAAAAA", "261120110000MIDREPRT"]
