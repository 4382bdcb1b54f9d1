from tests.conftest_backend import fake, fake_server, make_loader  # noqa: F401  (the fake backend on 127.0.0.1)
