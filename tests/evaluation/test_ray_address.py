"""A ``HOST:PORT`` Ray address that does not answer as a Ray head does is refused in one line within 30 s (needs no
Ray: the check is a plain socket probe, before ``ray.init``, which would retry such an address for minutes)."""

from __future__ import annotations

import http.server
import socket
import threading
import time

import pytest

from evaluation.ray_runner import SETTINGS_FRAME, check_port_answers


def serve(handle) -> tuple[socket.socket, threading.Thread]:
    """A listening socket on 127.0.0.1 whose one accepted connection ``handle`` answers; close it to stop."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer():
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        with connection:
            handle(connection)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return listener, thread


def address_of(listener: socket.socket) -> str:
    return f"127.0.0.1:{listener.getsockname()[1]}"


def test_a_plain_http_server_is_refused_in_one_line_well_within_30_seconds():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        start = time.monotonic()
        with pytest.raises(ConnectionError, match="answers, but not as a Ray head does") as error:
            check_port_answers(f"127.0.0.1:{server.server_address[1]}")
        assert time.monotonic() - start < 30 and "\n" not in str(error.value)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_port_that_accepts_and_says_nothing_is_refused_after_the_timeout():
    listener, thread = serve(lambda connection: connection.recv(100) and time.sleep(2))
    try:
        start = time.monotonic()
        with pytest.raises(ConnectionError, match="answered 'nothing' within 0.5 s"):
            check_port_answers(address_of(listener), timeout=0.5)
        assert time.monotonic() - start < 5
    finally:
        listener.close()
        thread.join()


def test_a_port_where_nothing_listens_is_refused():
    listener = socket.create_server(("127.0.0.1", 0))
    address = address_of(listener)
    listener.close()
    with pytest.raises(ConnectionError, match="nothing listens at"):
        check_port_answers(address)


def test_a_grpc_server_preface_is_accepted():
    settings = bytes([0, 0, 0, SETTINGS_FRAME, 0, 0, 0, 0, 0])
    listener, thread = serve(lambda connection: connection.sendall(settings) or connection.recv(100))
    try:
        check_port_answers(address_of(listener))
    finally:
        listener.close()
        thread.join()


def test_connect_ray_refuses_an_http_server_without_waiting_on_ray():
    pytest.importorskip("ray")
    from evaluation.ray_runner import RayConnectionError, connect_ray

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        start = time.monotonic()
        with pytest.raises(RayConnectionError, match="not as a Ray head does"):
            connect_ray(f"127.0.0.1:{server.server_address[1]}")
        assert time.monotonic() - start < 30
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
