"""A running backend job on the Run page: progress shown, and it moves when the job does."""

from __future__ import annotations

from tests.conftest_backend import KEY

LIVE = "eval-live000001"


def _progress(at) -> str:
    return at.get("progress")[0].proto.text


def test_running_job_progress_follows_the_backend(make_app, fake):
    fake.reset()
    at = make_app(run=LIVE)
    at.secrets["backends"] = {"local": {"url": fake.url, "api_key": KEY}}
    at.switch_page("views/run.py").run()
    assert not at.exception
    first = _progress(at)
    assert first.endswith("of 6 done")
    assert "still going" in at.info[0].value
    fake.advance(2)
    at.run()  # what the 5 s fragment tick does: one status call, then a rerun when the job moved
    assert not at.exception
    assert _progress(at) != first and _progress(at).endswith("of 6 done")
