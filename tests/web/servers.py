"""Real ``skipbo serve`` processes for the tests that need a socket: on a free port of 127.0.0.1, stopped by pid."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI_MODULE = "skipbo_cli.main"  # the module of the skipbo command


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def running_server(games: Path, *flags: str):
    """``skipbo serve --games GAMES FLAGS`` on a free port; yields ``(base URL, process)``; stopped at the end
    (SIGTERM, then SIGKILL after 10 s) unless the test stopped it."""
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    process = subprocess.Popen([sys.executable, "-m", CLI_MODULE, "serve", "--port", str(port), "--games", str(games),
                                *flags], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        banner = process.stdout.readline()
        assert f"{base}/" in banner, banner
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/api", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield base, process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        process.stdout.close()


def post_json(url: str, body: dict | None = None, headers: dict | None = None) -> tuple[int, dict]:
    """POST ``body`` (``{}`` when none) as JSON; the status and the JSON answer, refusals included."""
    request = urllib.request.Request(url, data=json.dumps(body or {}).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.load(error)
