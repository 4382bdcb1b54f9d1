"""A small httpx client for the synth eval-jobs API (spec: shared/formats/synth-backend-api.md §1, §8).

One `httpx.Client` per client object (connections are reused across reruns), explicit
timeouts, at most `tries` attempts with exponential backoff on 5xx, connect errors and
timeouts (`Retry-After` honoured on 429), and typed errors whose one-line messages say
what failed, where (URL and HTTP status) and what to do.

The API key travels only in the `Authorization` header. It is kept out of every message,
repr, log line and URL: messages show at most its last 4 characters, and every message is
scrubbed of the full key in case a server echoes it back.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from loaders.errors import SourceError
from loaders.redact import mask_secret

log = logging.getLogger("evaldash.backend")

RETRY_STATUS = frozenset({500, 502, 503, 504})
PREVIEW_CHARS = 200


def normalise_base_url(url: str) -> str:
    """Exactly what synth-ai's CLI, SDK and `ensure_api_base` do: strip `/`, append `/api` when missing."""
    base = url.strip().rstrip("/")
    if not base.endswith("/api"):
        base = f"{base}/api"
    return base


def display_url(url: str) -> str:
    """The URL with any `user:password@` removed: safe to show and log."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


class BackendError(SourceError):
    """Any failure talking to a backend; `url` never holds the key, `status` is the HTTP code if one came back."""

    def __init__(self, backend: str, detail: str, *, url: str, status: int | None = None) -> None:
        self.url = url
        super().__init__(backend, detail, status=status)


class BackendAuthError(BackendError):
    """401/403: the key is missing, wrong, or not allowed; retrying cannot help."""


class BackendNotFound(BackendError):
    """404 on a job, results or traces URL."""


class BackendNotReady(BackendError):
    """409/425 on `/results`: the job has not finished; try again on the next refresh."""


class BackendUnavailable(BackendError):
    """5xx (or 429) still failing after every try."""


class BackendTimeout(BackendError):
    """Connect or read timeout after every try."""


class BackendConnectError(BackendError):
    """Connection refused, DNS failure, reset: the backend is not reachable."""


class BackendBadResponse(BackendError):
    """A 200 whose body is not the JSON we expect; not retried."""


class BackendHTTPError(BackendError):
    """Any other 4xx (and 404/405 on the list URL, which callers turn into "list not supported")."""


def _body_detail(response: httpx.Response) -> str:
    """FastAPI-style `{"detail": ...}` when present, else the raw text; one line, at most 200 chars."""
    text = response.text
    try:
        data = json.loads(text)
        if isinstance(data, dict) and "detail" in data:
            text = data["detail"] if isinstance(data["detail"], str) else json.dumps(data["detail"])
    except ValueError:
        pass
    return " ".join(text.split())[:PREVIEW_CHARS]


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """`Retry-After` as seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class BackendClient:
    """Talks to one backend. `name` is how messages call it (e.g. the `[backends.<name>]` entry)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        name: str | None = None,
        transport: httpx.BaseTransport | None = None,
        connect_timeout: float = 5.0,
        read_timeout: float = 30.0,
        zip_timeout: float = 60.0,
        tries: int = 3,
        backoff: float = 1.0,
        max_retry_after: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = display_url(normalise_base_url(base_url))
        self._key = api_key if api_key is not None else os.environ.get("SYNTH_API_KEY") or None
        self.name = name or urlsplit(self.base_url).netloc or self.base_url
        self.tries = max(1, tries)
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        self._sleep = sleep
        self._timeout = httpx.Timeout(read_timeout, connect=connect_timeout)
        self._zip_timeout = httpx.Timeout(zip_timeout, connect=connect_timeout)
        # Userinfo in the configured URL would be a credential: it is dropped from base_url above. Redirects are
        # followed (http -> https); httpx drops the Authorization header when one leaves the origin.
        self._http = httpx.Client(transport=transport, timeout=self._timeout, follow_redirects=True,
                                  headers={"Accept": "application/json"})

    def __repr__(self) -> str:
        return f"BackendClient({self.base_url!r}, key={self.key_hint})"

    @property
    def key_hint(self) -> str:
        """What may be shown of the key: its last 4 characters, or that there is none."""
        return mask_secret(self._key) if self._key else "none"

    @property
    def has_key(self) -> bool:
        return bool(self._key)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> BackendClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- endpoints ---------------------------------------------------------------------------------

    def job_url(self, job_id: str) -> str:
        return f"{self.base_url}/eval/jobs/{job_id}"

    def list_jobs(self, *, limit: int = 50, offset: int = 0, status: str | None = None) -> Any:
        """`GET /eval/jobs`; 404/405 raise BackendHTTPError with that status (the caller falls back to job ids)."""
        params: dict[str, Any] = {"limit": limit, "offset": offset}
        if status:
            params["status"] = status
        return self.get_json("/eval/jobs", params=params, what="the job list")

    def get_job(self, job_id: str) -> Any:
        return self.get_json(f"/eval/jobs/{job_id}", what=f"job {job_id}", job_id=job_id)

    def get_results(self, job_id: str) -> Any:
        return self.get_json(f"/eval/jobs/{job_id}/results", what=f"results of job {job_id}", job_id=job_id, not_ready_ok=True)

    def get_traces_zip(self, job_id: str) -> bytes:
        """The raw ZIP bytes (60 s read timeout); 404 means "no traces for this job"."""
        response = self._request(f"/eval/jobs/{job_id}/traces", what=f"traces of job {job_id}", job_id=job_id,
                                 timeout=self._zip_timeout, traces=True)
        return response.content

    # -- plumbing ----------------------------------------------------------------------------------

    def get_json(self, path: str, *, params: dict[str, Any] | None = None, what: str = "", job_id: str | None = None,
                 not_ready_ok: bool = False) -> Any:
        response = self._request(path, params=params, what=what, job_id=job_id, not_ready_ok=not_ready_ok)
        try:
            return json.loads(response.content)
        except ValueError:
            preview = " ".join(response.text.split())[:PREVIEW_CHARS]
            raise self._error(BackendBadResponse, f"unexpected response from {self.name} (HTTP {response.status_code} at "
                              f"{self._shown(response.request.url)}, not JSON): {preview!r}",
                              response.request.url, response.status_code) from None

    def _shown(self, url: httpx.URL | str) -> str:
        return display_url(str(url))

    def _error(self, cls: type[BackendError], detail: str, url: httpx.URL | str, status: int | None) -> BackendError:
        detail = self._scrub(detail)
        shown = self._scrub(self._shown(url))
        log.info("backend %s: %s", self.name, detail)
        return cls(self.base_url, detail, url=shown, status=status)

    def _scrub(self, text: str) -> str:
        """Belt and braces: a server that echoes the key back must not get it onto the page."""
        if self._key and self._key in text:
            text = text.replace(self._key, self.key_hint)
        return text

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    def _delay(self, attempt: int) -> float:
        return self.backoff * (2 ** (attempt - 1))

    def _request(self, path: str, *, params: dict[str, Any] | None = None, what: str = "", job_id: str | None = None,
                 timeout: httpx.Timeout | None = None, not_ready_ok: bool = False, traces: bool = False) -> httpx.Response:
        """GET with bounded retries; returns a 200 response or raises a typed BackendError."""
        url = f"{self.base_url}{path}"
        last: tuple[type[BackendError], str, int | None] | None = None
        for attempt in range(1, self.tries + 1):
            started = time.monotonic()
            try:
                response = self._http.get(url, params=params, headers=self._headers(), timeout=timeout or self._timeout)
            except httpx.TimeoutException as exc:
                kind = "connecting to" if isinstance(exc, httpx.ConnectTimeout) else "waiting for"
                limit = (timeout or self._timeout).connect if isinstance(exc, httpx.ConnectTimeout) else (timeout or self._timeout).read
                last = (BackendTimeout, f"timed out after {limit:g} s {kind} {self.name} ({self._shown(url)})", None)
                log.debug("GET %s: timeout after %.1f s (try %d)", self._shown(url), time.monotonic() - started, attempt)
            except httpx.ConnectError as exc:
                reason = "connection refused" if "refused" in str(exc).lower() else f"cannot connect ({exc})"
                last = (BackendConnectError, f"cannot reach {self.name}: {reason} at {self._shown(url)}", None)
                log.debug("GET %s: %s (try %d)", self._shown(url), reason, attempt)
            except httpx.TransportError as exc:
                last = (BackendConnectError, f"cannot reach {self.name}: {type(exc).__name__} at {self._shown(url)}", None)
            else:
                status = response.status_code
                log.debug("GET %s -> %d (try %d)", self._shown(response.request.url), status, attempt)
                if status == 200:
                    return response
                shown = self._shown(response.request.url)
                if status == 429 or status >= 500:
                    kind = "rate limited by" if status == 429 else "backend unavailable:"
                    last = (BackendUnavailable, f"{kind} {self.name} (HTTP {status} at {shown}): {_body_detail(response)}", status)
                    if attempt < self.tries:
                        wait = retry_after_seconds(response.headers.get("retry-after")) if status == 429 else None
                        self._sleep(min(wait, self.max_retry_after) if wait is not None else self._delay(attempt))
                        continue
                    break
                raise self._http_error(status, response, shown, what, job_id, not_ready_ok, traces)
            if attempt < self.tries:
                self._sleep(self._delay(attempt))
        assert last is not None
        cls, detail, status = last
        tries = f"{self.tries} tries" if self.tries > 1 else "1 try"
        if cls is BackendUnavailable:
            detail = detail.replace(" (HTTP", f" after {tries} (HTTP", 1)
        else:
            detail = f"{detail}; gave up after {tries}"
        raise self._error(cls, detail, url, status)

    def _http_error(self, status: int, response: httpx.Response, shown: str, what: str, job_id: str | None,
                    not_ready_ok: bool, traces: bool) -> BackendError:
        """The non-retried statuses, each with the message a user should see."""
        body = _body_detail(response)
        if status == 401:
            if not self._key:
                msg = (f"no API key for {self.name} (HTTP 401 at {shown}): set SYNTH_API_KEY or api_key under "
                       f"[backends.<name>] in .streamlit/secrets.toml")
            else:
                msg = (f"the API key for {self.name} ({self.key_hint}) was refused (HTTP 401 at {shown}): missing or invalid; "
                       f"check SYNTH_API_KEY or [backends.<name>] in .streamlit/secrets.toml")
            return self._error(BackendAuthError, msg, shown, status)
        if status == 403:
            msg = (f"the API key for {self.name} ({self.key_hint}) was refused (HTTP 403 at {shown}): "
                   f"not allowed to read this job/org")
            return self._error(BackendAuthError, msg, shown, status)
        if status == 404 and traces:
            return self._error(BackendNotFound, f"no traces for this job ({job_id}) on {self.name} (HTTP 404 at {shown})",
                               shown, status)
        if status == 404 and job_id:
            return self._error(BackendNotFound, f"no such job {job_id} on {self.name} (HTTP 404 at {shown}): "
                               f"check the job id and the base URL", shown, status)
        if status in (409, 425) and not_ready_ok:
            return self._error(BackendNotReady, f"{what or 'this job'} not ready yet (HTTP {status} at {shown}): "
                               f"the job has not finished; will retry on the next refresh", shown, status)
        return self._error(BackendHTTPError, f"HTTP {status} from {self.name} for {what or 'request'} at {shown}: {body}",
                           shown, status)
