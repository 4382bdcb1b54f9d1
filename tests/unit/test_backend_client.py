"""The backend client over real HTTP against the fake backend: every fault, with the exact message a user sees."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import httpx
import pytest

from loaders.backend_client import (
    BackendAuthError,
    BackendBadResponse,
    BackendClient,
    BackendConnectError,
    BackendNotFound,
    BackendTimeout,
    BackendUnavailable,
    normalise_base_url,
    retry_after_seconds,
)
from tests.conftest_backend import KEY, Fake, closed_port

JOB = "eval-3f9c1a2b7d"


@pytest.mark.parametrize(("configured", "effective"), [
    ("https://api.usesynth.ai", "https://api.usesynth.ai/api"),
    ("https://api.usesynth.ai/", "https://api.usesynth.ai/api"),
    ("https://api.usesynth.ai/api/", "https://api.usesynth.ai/api"),
    ("http://localhost:8000/api", "http://localhost:8000/api"),
    ("http://host/api/v1", "http://host/api/v1/api"),  # sic: what the synth clients do (spec §1)
])
def test_base_url_normalised_like_the_synth_clients(configured: str, effective: str) -> None:
    assert normalise_base_url(configured) == effective


def _client(fake: Fake, **kw: object) -> BackendClient:
    kw.setdefault("api_key", KEY)
    kw.setdefault("backoff", 0.001)
    return BackendClient(fake.url, **kw)  # type: ignore[arg-type]


def test_ok_with_key_and_connection_reuse(fake: Fake) -> None:
    with _client(fake) as client:
        assert client.base_url == f"{fake.url}/api"
        assert client.get_job(JOB)["status"] == "completed"
        assert client.get_results(JOB)["summary"]["mean_score"] == 0.5
        assert client.get_traces_zip(JOB)[:2] == b"PK"


def test_401_wrong_key_is_not_retried(fake: Fake) -> None:
    client = _client(fake, api_key="sk-wrong-key-00001111")
    with pytest.raises(BackendAuthError) as info:
        client.get_job(JOB)
    host = fake.url.removeprefix("http://")
    assert info.value.detail == (
        f"the API key for {host} (****1111) was refused (HTTP 401 at {fake.url}/api/eval/jobs/{JOB}): missing or invalid; "
        "check SYNTH_API_KEY or [backends.<name>] in .streamlit/secrets.toml")
    assert str(info.value) == f"{fake.url}/api: {info.value.detail}"
    assert info.value.status == 401
    assert fake.requests(f"/api/eval/jobs/{JOB}") == 1


def test_401_fault_names_the_configured_backend(fake: Fake) -> None:
    fake.fault("401")
    with pytest.raises(BackendAuthError) as info:
        _client(fake, name="staging").get_job(JOB)
    assert info.value.detail.startswith("the API key for staging (****5b4a) was refused (HTTP 401 at ")


def test_no_key_at_all_says_so(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYNTH_API_KEY", raising=False)
    with pytest.raises(BackendAuthError) as info:
        BackendClient(fake.url, backoff=0.001).get_job(JOB)
    host = fake.url.removeprefix("http://")
    assert info.value.detail == (f"no API key for {host} (HTTP 401 at {fake.url}/api/eval/jobs/{JOB}): "
                                 "set SYNTH_API_KEY or api_key under [backends.<name>] in .streamlit/secrets.toml")


def test_key_from_env(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNTH_API_KEY", KEY)
    assert BackendClient(fake.url).get_job(JOB)["job_id"] == JOB


def test_403(fake: Fake) -> None:
    fake.fault("403")
    with pytest.raises(BackendAuthError) as info:
        _client(fake).get_job(JOB)
    host = fake.url.removeprefix("http://")
    assert info.value.detail == (f"the API key for {host} (****5b4a) was refused (HTTP 403 at {fake.url}/api/eval/jobs/{JOB}): "
                                 "not allowed to read this job/org")
    assert fake.requests(f"/api/eval/jobs/{JOB}") == 1


def test_404_job(fake: Fake) -> None:
    with pytest.raises(BackendNotFound) as info:
        _client(fake).get_job("eval-nope")
    host = fake.url.removeprefix("http://")
    assert info.value.detail == (f"no such job eval-nope on {host} (HTTP 404 at {fake.url}/api/eval/jobs/eval-nope): "
                                 "check the job id and the base URL")


def test_5xx_retried_then_reported(fake: Fake) -> None:
    fake.fault("500")
    with pytest.raises(BackendUnavailable) as info:
        _client(fake).get_job(JOB)
    host = fake.url.removeprefix("http://")
    assert info.value.detail == (f"backend unavailable: {host} after 3 tries (HTTP 500 at {fake.url}/api/eval/jobs/{JOB}): "
                                 "internal error (injected fault)")
    assert info.value.status == 500
    assert fake.requests(f"/api/eval/jobs/{JOB}") == 3


def test_5xx_once_then_recovers(fake: Fake) -> None:
    fake.fault("500", times=1)
    assert _client(fake).get_job(JOB)["job_id"] == JOB
    assert fake.requests(f"/api/eval/jobs/{JOB}") == 2


def test_backoff_is_exponential(fake: Fake) -> None:
    fake.fault("500")
    waits: list[float] = []
    with pytest.raises(BackendUnavailable):
        _client(fake, backoff=0.5, sleep=waits.append).get_job(JOB)
    assert waits == [0.5, 1.0]


def test_timeout(fake: Fake) -> None:
    fake.fault("slow", delay=1.0)
    with pytest.raises(BackendTimeout) as info:
        _client(fake, read_timeout=0.2).get_job(JOB)
    host = fake.url.removeprefix("http://")
    assert info.value.detail == (f"timed out after 0.2 s waiting for {host} ({fake.url}/api/eval/jobs/{JOB}); "
                                 "gave up after 3 tries")
    assert info.value.status is None


def test_connection_refused() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    waits: list[float] = []
    with pytest.raises(BackendConnectError) as info:
        BackendClient(url, api_key=KEY, backoff=0.001, sleep=waits.append).get_job(JOB)
    assert info.value.detail == (f"cannot reach {url.removeprefix('http://')}: connection refused at {url}/api/eval/jobs/{JOB}; "
                                 "gave up after 3 tries")
    assert len(waits) == 2  # three tries


def test_malformed_json_not_retried(fake: Fake) -> None:
    fake.fault("malformed")
    with pytest.raises(BackendBadResponse) as info:
        _client(fake).get_job(JOB)
    host = fake.url.removeprefix("http://")
    assert info.value.detail == (f"unexpected response from {host} (HTTP 200 at {fake.url}/api/eval/jobs/{JOB}, not JSON): "
                                 "'<html><body>502 Bad Gateway: upstream sent garbage</body></html>'")
    assert fake.requests(f"/api/eval/jobs/{JOB}") == 1


def test_malformed_preview_is_capped_at_200_chars() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, text="x" * 1000))
    with pytest.raises(BackendBadResponse) as info:
        BackendClient("http://127.0.0.1:9", api_key=KEY, transport=transport).get_job(JOB)
    assert info.value.detail.endswith(f"not JSON): '{'x' * 200}'")


def test_429_honours_retry_after() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            return httpx.Response(429, headers={"Retry-After": "2"}, json={"detail": "slow down"})
        return httpx.Response(200, json={"job_id": JOB, "status": "running"})

    waits: list[float] = []
    client = BackendClient("http://127.0.0.1:9", api_key=KEY, transport=httpx.MockTransport(handler), sleep=waits.append)
    assert client.get_job(JOB)["status"] == "running"
    assert waits == [2.0]


def test_retry_after_http_date() -> None:
    now = datetime(2025, 11, 22, 13, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("Sat, 22 Nov 2025 13:00:05 GMT", now=now) == 5.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


def test_key_never_leaks_into_messages_reprs_or_logs(fake: Fake, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    messages: list[str] = []
    client = _client(fake)
    for mode in ("401", "403", "500", "malformed"):
        fake.fault(mode)
        with pytest.raises(Exception) as info:
            client.get_job(JOB)
        messages += [str(info.value), repr(info.value), info.value.url]  # type: ignore[attr-defined]
    fake.reset()
    with pytest.raises(BackendNotFound) as info:
        client.get_traces_zip("eval-7c1d0e9f42")
    messages += [str(info.value), repr(client)]
    # A server that echoes the key back (in an error body) still cannot get it onto the page.
    echo = httpx.MockTransport(lambda request: httpx.Response(400, json={"detail": f"bad header {request.headers['authorization']}"}))
    with pytest.raises(Exception) as info:
        BackendClient("http://127.0.0.1:9", api_key=KEY, transport=echo).get_job(JOB)
    messages.append(str(info.value))
    assert "****5b4a" in messages[-1]
    # Credentials in the configured URL are dropped.
    assert BackendClient("http://user:pw-secret@127.0.0.1:9").base_url == "http://127.0.0.1:9/api"
    for text in [*messages, caplog.text]:
        assert KEY not in text
