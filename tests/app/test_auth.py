"""Login for a shared URL: open without [auth]; with it, logged-out, allowed and refused users."""

from __future__ import annotations

import pytest

from dashboard.auth import is_allowed
from tests.conftest import FIXTURES

AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x" * 32, "client_id": "evaldash",
        "client_secret": "not-a-real-secret", "server_metadata_url": "https://idp.example/.well-known/openid-configuration"}


@pytest.mark.parametrize(("email", "emails", "domains", "allowed"), [
    ("ana@team.example", [], ["team.example"], True),
    ("Ana@Team.Example", [], ["@team.example"], True),
    ("eve@evil.example", [], ["team.example"], False),
    ("bob@partner.example", ["bob@partner.example"], ["team.example"], True),
    ("bob@team.example.evil", [], ["team.example"], False),
    (None, [], [], False),
    ("any@where.example", [], [], True),
])
def test_allowlist(email, emails, domains, allowed):
    assert is_allowed(email, emails, domains) is allowed


def _app(make_app):
    at = make_app(str(FIXTURES / "evals" / "report_on_line2.jsonl"))
    at.secrets["auth"] = AUTH
    at.secrets["access"] = {"allowed_domains": ["team.example"]}
    return at


def test_open_without_auth_says_so(make_app):
    at = make_app(str(FIXTURES / "evals" / "report_on_line2.jsonl"))
    at.run()
    assert "Open access" in at.sidebar.caption[0].value
    assert len(at.dataframe) == 1


def test_logged_out_sees_login_and_no_data(make_app):
    at = _app(make_app)
    at.user = {"is_logged_in": False}
    at.run()
    assert not at.exception
    assert at.button(key="auth.login").label == "Log in"
    assert len(at.dataframe) == 0 and "261120100000AAAAAAAA" not in str(at.main)


def test_allowed_user_sees_runs(make_app):
    at = _app(make_app)
    at.user = {"is_logged_in": True, "email": "ana@team.example"}
    at.run()
    assert not at.exception
    assert list(at.dataframe[0].value["run_id"]) == ["261120100000AAAAAAAA"]
    assert "Signed in as ana@team.example" in [t.value for t in at.sidebar.text]


def test_refused_user_sees_a_clear_page_and_no_data(make_app):
    at = _app(make_app)
    at.user = {"is_logged_in": True, "email": "eve@evil.example"}
    at.run()
    assert at.title[0].value == "Access denied"
    assert "eve@evil.example is not on this dashboard's allowlist" in at.text[0].value
    assert len(at.dataframe) == 0
