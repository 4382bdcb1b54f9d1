"""A real, local fake of the synth eval-jobs backend: `python -m fake_backend --port 8000 --key K`."""

from fake_backend.app import create_app
from fake_backend.server import ServerThread

__all__ = ["ServerThread", "create_app"]
