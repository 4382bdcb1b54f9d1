"""Optional login for a shared URL: OIDC through st.login, then an allowlist.

Without an `[auth]` section in secrets the app is open (and says so). With one, every
page is behind the login, and only emails/domains listed under `[access]` get in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import streamlit as st

from dashboard.config import read_secrets


def is_allowed(email: str | None, emails: Iterable[str] = (), domains: Iterable[str] = ()) -> bool:
    """Case-insensitive exact email or `@domain` match; an empty allowlist lets every logged-in user in."""
    emails = {e.strip().lower() for e in emails if e.strip()}
    domains = {d.strip().lower().lstrip("@") for d in domains if d.strip()}
    if not emails and not domains:
        return email is not None
    if not email or "@" not in email:
        return False
    email = email.strip().lower()
    return email in emails or email.rsplit("@", 1)[1] in domains


def auth_configured(secrets: Mapping[str, Any]) -> bool:
    return isinstance(secrets.get("auth"), Mapping) and bool(secrets["auth"])


def gate() -> None:
    """Stop the script unless the viewer may see data. Call before any page renders."""
    secrets = read_secrets()
    if not auth_configured(secrets):
        st.sidebar.caption(":material/lock_open: Open access: no login is configured (see `[auth]` in secrets.toml.example).")
        return
    if not st.user.is_logged_in:
        st.title("evaldash")
        st.write("Sign in to see this team's eval results.")
        if st.button("Log in", icon=":material/login:", key="auth.login", type="primary"):
            st.login()
        st.stop()
    access = secrets.get("access") if isinstance(secrets.get("access"), Mapping) else {}
    email = st.user.get("email")
    if not is_allowed(email, access.get("allowed_emails", ()), access.get("allowed_domains", ())):
        st.title("Access denied")
        st.text(f"The account {email or '(no email)'} is not on this dashboard's allowlist. Ask its owner to add it.")
        if st.button("Log out", key="auth.logout_refused"):
            st.logout()
        st.stop()
    with st.sidebar:
        st.text(f"Signed in as {email}")
        if st.button("Log out", icon=":material/logout:", key="auth.logout"):
            st.logout()
