"""`python -m fake_backend --port 8000 --key K [--faults]`: the local synth backend for the demo and manual checks."""

from __future__ import annotations

import argparse
import os

import uvicorn

from fake_backend.app import FAULTS, create_app

DEFAULT_KEY = "evaldash-demo-key"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m fake_backend", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--key", default=os.environ.get("SYNTH_API_KEY") or DEFAULT_KEY,
                        help=f"bearer key clients must send (default: $SYNTH_API_KEY, else {DEFAULT_KEY!r})")
    parser.add_argument("--faults", action="store_true", help="enable POST /_admin/fault, /_admin/reset, /_admin/advance")
    parser.add_argument("--fault", choices=FAULTS, default=os.environ.get("FAKE_BACKEND_FAULT") or None,
                        help="start with this fault active (env FAKE_BACKEND_FAULT)")
    parser.add_argument("--seconds-per-seed", type=float, default=4.0, help="how fast the running job advances")
    args = parser.parse_args(argv)
    app = create_app(args.key, faults=args.faults or bool(args.fault), seconds_per_seed=args.seconds_per_seed, fault=args.fault)
    print(f"fake synth backend: http://{args.host}:{args.port} (key ****{args.key[-4:]}, faults {'on' if args.faults else 'off'})",
          flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
