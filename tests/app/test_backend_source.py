"""A live backend as a source in the app: jobs beside files, honest failures, the key never shown."""

from __future__ import annotations

from tests.conftest import FIXTURES
from tests.conftest_backend import KEY


def _all_text(at) -> str:
    """Every value the page would render, in one string (labels, text, code, tables)."""
    parts: list[str] = []
    for node in (at.main, at.sidebar):
        stack = [node]
        while stack:
            element = stack.pop()
            stack.extend(getattr(element, "children", {}).values())
            for attr in ("value", "label", "body", "help", "placeholder"):
                value = getattr(element, attr, None)
                if value is not None:
                    parts.append(value.to_csv() if hasattr(value, "to_csv") else str(value))
    return "\n".join(parts)


def test_runs_page_lists_jobs_beside_files(make_app, fake_server):
    at = make_app(str(FIXTURES / "evals" / "report_on_line2.jsonl"))
    at.secrets["backends"] = {"local": {"url": fake_server, "api_key": KEY}}
    at.run()
    assert not at.exception
    table = at.dataframe[0].value.set_index("run_id")
    assert "261120100000AAAAAAAA" in table.index
    jobs = table[table["source_kind"] == "backend"]
    assert len(jobs) >= 5 and all(str(i).startswith("eval-") for i in jobs.index)
    assert set(jobs["status"]) >= {"completed", "failed", "cancelled", "running"}
    page = _all_text(at)
    assert KEY not in page and KEY[-12:] not in page
    assert all(KEY not in v for v in at.query_params.values())


def test_refused_key_says_which_backend(make_app, fake_server):
    at = make_app(str(FIXTURES / "evals" / "report_on_line2.jsonl"))
    at.secrets["backends"] = {"local": {"url": fake_server, "api_key": "sk-wrong-key-000000000000"}}
    at.run()
    assert not at.exception
    assert list(at.dataframe[0].value["run_id"]) == ["261120100000AAAAAAAA"]  # the file still loads
    failed = "\n".join(c.value for c in at.expander[0].code)
    assert "the API key for local" in failed and "was refused" in failed and "401" in failed
    assert "sk-wrong-key-000000000000" not in _all_text(at)
