"""Unit-test fixtures: the fake synth backend on 127.0.0.1 (defined in tests/conftest_backend.py)."""

from tests.conftest_backend import fake, fake_server, make_loader  # noqa: F401
