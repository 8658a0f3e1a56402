"""``skipbo serve``: play the agents and watch saved games in a browser.

Usage::

    skipbo serve                                   # http://127.0.0.1:8000/
    skipbo serve --port 8080 --models runs/ --games games/

The page plays a hand or a match against the bots (``random``, ``greedy``, ``planner``,
``pretrained-2p``) and the model files (``.zip``, ``.pt``) found in ``--models``, which the page names
by their path inside that folder; and replays any saved game in ``--games`` (where the games played
here are saved too, in ``skipbo play``'s format). The server listens on 127.0.0.1 unless ``--host``
says otherwise; the page is served only under that address (and ``localhost`` for a loopback one)
and the names given with ``--allowed-host`` (:mod:`skipbo_web.guard`). The API is described in
:mod:`skipbo_web.app` and at ``/api``. On SIGTERM or Ctrl-C every game still in play is saved.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from skipbo_web.guard import is_loopback


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--models", metavar="DIR", help="a folder of saved models (.zip, .pt) the page may seat")
    parser.add_argument("--games", metavar="DIR", default="games",
                        help="where games are saved and replays are read from (default games/)")
    parser.add_argument("--max-games", type=int, default=64, metavar="N",
                        help="games held in memory at once; more are refused until one ends (default 64)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="another name the page may be reached by (the Host header), e.g. this machine's "
                             "name on the network with --host 0.0.0.0; repeatable")


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn
        from skipbo_web.app import create_app
    except ModuleNotFoundError as error:
        raise SystemExit(f"skipbo serve: error: {error.name} is not installed: "
                         "pip install -e '.[web]' (starlette and uvicorn)") from None
    if args.models is not None and not Path(args.models).is_dir():
        raise ValueError(f"--models {args.models}: no such folder")
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port {args.port}: use 0 to 65535")
    if args.max_games < 1:
        raise ValueError(f"--max-games {args.max_games}: use an integer >= 1")
    for name in args.allowed_host:
        if not name or any(character in name for character in "/:[]@ ") or not name.isascii():
            raise ValueError(f"--allowed-host {name!r}: give a host name or an IPv4 address, "
                             "without a port (the server's port is added)")
    app = create_app(games_dir=args.games, models_dir=args.models, max_games=args.max_games, host=args.host,
                     port=args.port, allowed_hosts=tuple(args.allowed_host))
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"skipbo serve: http://{host}:{args.port}/  (games saved in {args.games}/; Ctrl-C stops)", flush=True)
    if not is_loopback(args.host):
        print("skipbo serve: anyone who can reach this address can play and read every game: there is no login "
              "and no TLS (see the README, 'Play and watch in a browser')", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0

