"""The real ``skipbo serve`` process (uvicorn on 127.0.0.1): saving games on SIGTERM and Ctrl-C, bodies capped
while they are read, the Host check on the wire."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytest.importorskip("uvicorn", reason="the web extra is not installed (pip install -e '.[web]')")

from skipbo_env.saved_games import load_hands  # noqa: E402
from skipbo_env import Game  # noqa: E402
from tests.web.servers import post_json, running_server  # noqa: E402

NEW_GAME = {"rules": {"stock_size": 3}, "opponents": ["greedy"]}


def _peak_memory_kib(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/PID/status")


def _raw_request(base: str, head: str, body_chunks=()) -> str:
    """Send ``head`` (and the chunks, until the server stops reading); the status line of the answer."""
    address = urlsplit(base)
    with socket.create_connection((address.hostname, address.port), timeout=30) as connection:
        connection.sendall(head.encode())
        try:
            for chunk in body_chunks:
                connection.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed: it did not read on
        try:
            return connection.recv(65536).decode("latin-1").split("\r\n")[0]
        except ConnectionResetError:
            return ""


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_games_in_play_are_saved_when_the_server_is_stopped(tmp_path, stop):
    games = tmp_path / "games"
    with running_server(games) as (base, process):
        made = []
        for body in ({**NEW_GAME, "seed": 3}, {**NEW_GAME, "seed": 4, "match": True}, {**NEW_GAME, "seat": 1}):
            status, state = post_json(f"{base}/api/games", body)
            assert status == 201, state
            made.append(state)
        while made[0]["waiting_for"] == "opponent":
            made[0] = post_json(f"{base}/api/games/{made[0]['id']}/advance")[1]
        status, state = post_json(f"{base}/api/games/{made[0]['id']}/act", {"action": made[0]["legal"][0]["id"]})
        assert status == 200, state
        assert not games.exists() or not list(games.iterdir())  # nothing saved while the games are in play
        process.send_signal(stop)
        process.wait(timeout=30)
    saved = sorted(games.glob("*.json"))
    assert len(saved) == 3 and not list(games.glob(".*")), [path.name for path in games.iterdir()]
    for state in made:  # a file per game, named by the start of its id
        assert sum(path.name.endswith(f"-{state['id'][:6]}.json") for path in saved) == 1
    for path in saved:
        hands = load_hands(str(path))  # skipbo replay reads every one
        data = json.loads(path.read_text())
        assert data["agents"] in (["human", "greedy"], ["greedy", "human"])
        assert all(hand.start(len(hand.record["actions"])).to_dict() == hand.final_state for hand in hands)
    first = json.loads(next(path for path in saved if path.name.endswith(f"-{made[0]['id'][:6]}.json")).read_text())
    assert first["seed"] == 3 and len(first["actions"]) >= 1 and "outcome" not in first["final_state"]
    assert Game.replay(first).to_dict() == first["final_state"]


def test_a_large_body_is_refused_while_read_and_never_held_in_memory(tmp_path):
    with running_server(tmp_path / "games") as (base, process):
        before = _peak_memory_kib(process.pid)
        host = urlsplit(base).netloc
        declared = _raw_request(base, f"POST /api/games HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                                      f"Content-Length: {50 * 2**20}\r\n\r\n")
        assert declared.startswith("HTTP/1.1 413"), declared  # answered before the body was sent

        megabyte = b" " * 2**20
        chunk = f"{len(megabyte):x}\r\n".encode() + megabyte + b"\r\n"
        finished = []

        def send_chunked():
            try:
                finished.append(_raw_request(base, f"POST /api/games HTTP/1.1\r\nHost: {host}\r\nContent-Type: "
                                                   "application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
                                             (chunk for _ in range(200))))
            except OSError as error:  # a timeout: the server neither answered nor stopped reading
                finished.append(f"no answer: {error}")

        sender = threading.Thread(target=send_chunked)
        sender.start()
        sender.join(timeout=120)
        assert not sender.is_alive(), "the server kept reading a 200 MB body"
        assert finished[0].startswith("HTTP/1.1 413"), finished
        grown = _peak_memory_kib(process.pid) - before
        assert grown < 40 * 1024, f"the server's peak memory grew by {grown // 1024} MiB for a refused body"
        status, _ = post_json(f"{base}/api/games", NEW_GAME)
        assert status == 201  # and it serves on


def test_the_host_check_holds_on_the_wire(tmp_path):
    with running_server(tmp_path / "games") as (base, _):
        port = urlsplit(base).port
        for host, expected in ((f"evil.test:{port}", "400"), (f"localhost:{port}", "200"),
                               (f"127.0.0.1:{port}", "200")):
            line = _raw_request(base, f"GET /api HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
            assert line.split()[1] == expected, (host, line)
        started = time.monotonic()
        status, answer = post_json(f"{base}/api/games", NEW_GAME, headers={"Origin": "http://evil.test"})
        assert status == 403 and "may not change anything" in answer["error"] and time.monotonic() - started < 10
