"""Tournament games as Ray tasks: ``skipbo evaluate --ray [ADDRESS]`` (``pip install -e '.[rllib]'``).

The schedule is the harness's own (:func:`evaluation.schedule.schedule`): every game carries
its deal seed, seating and policy seeds, and each task plays a chunk of games exactly as a
worker process does (:func:`evaluation.python_runner.play_chunk`), so the result is the same game
for game as a local run with the same seed, whatever the number of nodes. Model files named by
path are read here and shipped to the tasks, so the other machines of a cluster need not have
them. Game records (``--save-games``) are not written from Ray tasks (they would land on the
machine that played each game).

``ADDRESS``: ``local`` starts a Ray instance on this machine (listening on 127.0.0.1 only,
``--workers`` CPUs); ``auto`` joins the cluster this machine is part of; ``HOST:PORT`` joins that cluster's
head (``ray start --head`` prints it).
"""

from __future__ import annotations

import os
import socket
import tempfile
from typing import Sequence

from agents.saved_model import read_model_bytes
from evaluation.python_runner import chunks, init_worker, play_chunk

LOCAL = "local"
CHUNK_GAMES = 25
"""Games per Ray task: enough to pay for the task's start, small enough to spread over a cluster."""


class RayConnectionError(ValueError):
    """No Ray cluster answers at the address given; the message says how to start one."""


def connect_ray(address: str | None, num_cpus: int | None = None) -> bool:
    """Join the Ray cluster at ``address`` (``None`` or ``"local"``: start one here, bound to 127.0.0.1).

    Returns ``True`` when this call started Ray (the caller shuts it down), ``False`` when Ray
    was already initialised in this process.
    """
    try:
        import ray
    except ImportError:
        raise RayConnectionError("Ray is not installed: pip install -e '.[rllib]'") from None
    if ray.is_initialized():
        return False
    if address in (None, LOCAL):
        bind_to_loopback()
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
                 log_to_driver=False, configure_logging=False)
        return True
    try:
        check_port_answers(address)
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, ValueError, RuntimeError) as error:
        raise RayConnectionError(
            f"no Ray cluster answers at {address!r} ({str(error).splitlines()[0]}); start one with "
            "`ray start --head`, or use 'local' for a Ray instance on this machine") from None
    return True


HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
"""What an HTTP/2 client sends first: the connection preface, then an empty SETTINGS frame."""
SETTINGS_FRAME = 4
"""The frame type a gRPC server's first frame has (RFC 9113, 3.4: the server's preface is a SETTINGS frame)."""
RAY_ANSWER_SECONDS = 10.0
"""How long the address has to connect, and again to answer, before it is refused (well within 30 s)."""


def check_port_answers(address: str, timeout: float = RAY_ANSWER_SECONDS) -> None:
    """``ConnectionError`` when a ``HOST:PORT`` address does not answer as a Ray head does (``ray.init`` would
    retry it for minutes): nothing accepts a connection, or what does is no gRPC server (a Ray head's port is
    one, and HTTP/2 underneath): sent an HTTP/2 preface, it must answer with a SETTINGS frame within ``timeout``
    seconds. Other addresses (``auto``), and clusters that speak TLS (``RAY_USE_TLS``), are left to Ray."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or os.environ.get("RAY_USE_TLS", "0") not in ("", "0"):
        return
    try:
        connection = socket.create_connection((host, int(port)), timeout=timeout)
    except OSError as error:
        raise ConnectionError(f"nothing listens at {host}:{port}: {error.strerror or error}") from None
    with connection:
        try:
            connection.sendall(HTTP2_PREFACE)
            connection.settimeout(timeout)
            answer = connection.recv(9)
        except TimeoutError:
            answer = b""
        except OSError as error:  # reset by the peer, ...
            raise ConnectionError(f"{host}:{port} accepted a connection and dropped it ({error.strerror or error}); "
                                  "a Ray head answers") from None
    if len(answer) < 4 or answer[3] != SETTINGS_FRAME or answer.startswith(b"HTTP/"):
        seen = answer[:40].decode("latin-1").splitlines()[0] if answer.strip() else "nothing"
        raise ConnectionError(f"{host}:{port} answers, but not as a Ray head does (its gRPC port answers an "
                              f"HTTP/2 preface with a SETTINGS frame; this answered {seen!r} within {timeout:g} s)")


def bind_to_loopback() -> None:
    """Make a Ray instance started from this process listen on 127.0.0.1 only.

    Ray binds its servers to the machine's network address, even when given 127.0.0.1, except
    where it treats clusters as off (macOS and Windows, or ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``).
    A local instance is one machine, so clusters are turned off for it, in this process (read
    at call time by Ray) and in the processes it starts (the environment variable).
    """
    from ray._private import ray_constants

    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False


def run_on_ray(specs, names: Sequence[str], agents: Sequence, rules, address: str | None, workers: int,
               result, bar) -> None:
    """Play ``specs`` as Ray tasks of :data:`CHUNK_GAMES` games, into ``result`` (the first agent error stops it)."""
    import ray

    started = connect_ray(address, num_cpus=workers)
    try:
        shipped = ray.put(_model_files(agents))
        task = ray.remote(_play_on_worker)
        pending = [task.remote(names, list(agents), rules.to_dict(), shipped, chunk)
                   for chunk in chunks(specs, CHUNK_GAMES)]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            games, error = ray.get(done[0])
            result.games.extend(games)
            bar.update(len(games))
            if error is not None:
                result.error = error
                for ref in pending:
                    ray.cancel(ref)
                return
    finally:
        if started:
            ray.shutdown()


def _model_files(agents: Sequence) -> dict[int, tuple[str, bytes]]:
    """Agent index -> (file name, bytes) of every agent given as the path of a model file."""
    files = {}
    for index, agent in enumerate(agents):
        if isinstance(agent, str) and os.path.isfile(agent):
            files[index] = (os.path.basename(agent), read_model_bytes(agent))
    return files


def _play_on_worker(names, agents, rules_dict, model_files, chunk):
    """One Ray task: the chunk's games, with shipped model files written to a private folder first."""
    with tempfile.TemporaryDirectory(prefix="skipbo-models-") as folder:
        agents = list(agents)
        for index, (name, data) in model_files.items():
            path = os.path.join(folder, f"{index}-{name}")
            with open(path, "wb") as handle:
                handle.write(data)
            agents[index] = path
        init_worker(names, agents, rules_dict, None)
        return play_chunk(chunk)

