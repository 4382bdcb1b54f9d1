"""A log that grows on disk shows up again: on its own within seconds, at once with Refresh."""

from __future__ import annotations

import shutil

from tests.conftest import FIXTURES

EXTRA = ('{"run_id": "261120100000AAAAAAAA", "event_id": 8, "sample_id": "arith.dev.77", "type": "match", '
         '"data": {"correct": true, "expected": "4", "picked": "4"}}\n')


def test_refresh_rereads_a_changed_log(make_app, tmp_path):
    log = tmp_path / "run.jsonl"
    shutil.copy(FIXTURES / "evals" / "report_on_line2.jsonl", log)
    at = make_app(str(log))
    at.run()
    assert at.dataframe[0].value.loc[0, "n_samples"] == 4
    with log.open("a") as fh:
        fh.write(EXTRA)
    at.sidebar.button(key="sources.refresh").click().run()
    assert not at.exception
    assert at.dataframe[0].value.loc[0, "n_samples"] == 5
