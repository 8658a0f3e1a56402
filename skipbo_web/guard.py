"""What every request to ``skipbo serve`` passes before the API sees it, and what every answer carries.

The server has no login and no TLS; these checks keep *other pages in a browser on this machine*
from driving it (a page can send requests to any address, and DNS rebinding can make a page's own
name point at 127.0.0.1):

- the ``Host`` header must be an address the server serves (:class:`HostCheck`), else 400;
- a state-changing request (any method but GET, HEAD, OPTIONS) must come from the page's own
  origin: a ``Sec-Fetch-Site`` other than ``same-origin``, or an ``Origin`` (or, without one, a
  ``Referer``) that is not ``http://HOST``, is refused with 403; a program that sends none of
  these (curl, a script) is served;
- its body must be ``Content-Type: application/json`` (the types a page may send without asking
  the server first, ``text/plain`` and the form types, get 415) and a ``Content-Length`` above
  the cap gets 413 before anything is read;
- an unexpected exception is one logged line and a 500 ``{"error": ...}``, without a traceback;
- every answer carries :data:`SECURITY_HEADERS`.

Each refusal is JSON ``{"error": "one line"}``.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from typing import Iterable
from urllib.parse import urlsplit

SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
"""The page loads only its own script, style sheet and JSON (its icon is a ``data:`` URL); it is never framed."""
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
ALL_INTERFACES = ("0.0.0.0", "::", "")
LOG = logging.getLogger("skipbo_web")


class HostCheck:
    """Which ``Host`` headers name this server: ``host:port`` as served, and for a loopback address
    also ``localhost``, ``127.0.0.1`` and ``[::1]``; for all interfaces (``0.0.0.0``, ``::``) any
    IP address (a page reached by address cannot be a rebound name) and the loopback names; and
    the ``extra`` names (``--allowed-host``), each at the served port (any port when it is 0)."""

    def __init__(self, host: str, port: int, extra: Iterable[str] = ()) -> None:
        self.port = port
        self.any_address = host in ALL_INTERFACES
        names = {host.lower(), *(name.lower() for name in extra)}
        if self.any_address or is_loopback(host):
            names.update(LOOPBACK_NAMES)
        self.names = names - {""}

    def allows(self, header: str) -> bool:
        name, port = _split_host(header)
        if name is None or (self.port != 0 and port != self.port):
            return False
        return name in self.names or (self.any_address and _is_address(name))

    def describe(self) -> str:
        port = "any port" if self.port == 0 else f"port {self.port}"
        addresses = " or any IP address" if self.any_address else ""
        return f"{', '.join(sorted(self.names))}{addresses} at {port}"


def is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def _split_host(header: str) -> tuple[str | None, int | None]:
    """``(name, port)`` of a ``Host`` header (port 80 when none is given); ``(None, None)`` when malformed."""
    header = header.strip().lower()
    if header.startswith("["):
        name, bracket, rest = header[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None, None
        port_text = rest[1:] if rest else ""
    else:
        name, _, port_text = header.partition(":")
    if not name or (port_text and not (port_text.isascii() and port_text.isdigit() and len(port_text) <= 5)):
        return None, None
    return name, int(port_text) if port_text else 80


class RequestGuard:
    """ASGI middleware: the checks of the module docstring, around the Starlette app."""

    def __init__(self, app, hosts: HostCheck, max_body_bytes: int) -> None:
        self.app = app
        self.hosts = hosts
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_with_headers(message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", []), *_encoded(SECURITY_HEADERS)]}
            await send(message)

        refusal = self.refusal(scope)
        if refusal is not None:
            await send_error(send_with_headers, *refusal)
            return
        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as error:  # a bug: one line in the log, a one-line 500 to the client
            LOG.error("skipbo serve: %s %s failed: %s: %s", scope["method"], scope["path"], type(error).__name__,
                      " ".join(str(error).split())[:200])
            if not started:
                await send_error(send_with_headers, 500, f"internal error ({type(error).__name__}); "
                                                         "the game is unchanged")

    def refusal(self, scope) -> tuple[int, str] | None:
        """``(status, message)`` for a request refused before the app sees it, else ``None``."""
        headers = _headers(scope)
        host = headers.get("host", "")
        if not self.hosts.allows(host):
            return 400, (f"Host {host[:80]!r} is not an address this server serves (it serves "
                         f"{self.hosts.describe()}; add a name with --allowed-host)")
        if scope["method"] in SAFE_METHODS:
            return None
        return (_cross_origin(headers, f"http://{host.strip().lower()}")
                or _wrong_type(headers.get("content-type", ""))
                or _too_long(headers.get("content-length"), self.max_body_bytes))


def _cross_origin(headers: dict, own_origin: str) -> tuple[int, str] | None:
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return 403, (f"a {site} request may not change anything here (Sec-Fetch-Site: {site[:40]}): "
                     "use this server's page")
    origin = headers.get("origin")
    if origin is not None:
        if origin.strip().lower() != own_origin:
            return 403, f"a request from {origin[:80]!r} may not change anything here: only {own_origin} may"
        return None
    referer = headers.get("referer")
    if referer is not None and _origin_of(referer) != own_origin:
        return 403, (f"a request from a page at {_origin_of(referer)[:80]!r} may not change anything here: "
                     f"only {own_origin} may")
    return None


def _origin_of(url: str) -> str:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url
    return f"{parts.scheme}://{parts.netloc}".lower()


def _wrong_type(content_type: str) -> tuple[int, str] | None:
    media_type = content_type.split(";")[0].strip().lower()
    if media_type != "application/json":
        shown = repr(content_type[:60]) if content_type else "none"
        return 415, f"send the body as Content-Type: application/json (this request's is {shown})"
    return None


def _too_long(length: str | None, cap: int) -> tuple[int, str] | None:
    if length is None:
        return None
    digits = length.strip()
    if not (digits.isascii() and digits.isdigit()):
        return 400, f"Content-Length {length[:40]!r} is not a number of bytes"
    if len(digits) > len(str(cap)) or int(digits) > cap:
        return 413, f"the body is {digits[:20]} bytes, more than the {cap:,} a request may send"
    return None


def _headers(scope) -> dict[str, str]:
    """The request's headers by lower-case name (the last of repeated ones)."""
    return {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}


def _encoded(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]


async def send_error(send, status: int, message: str) -> None:
    """Answer ``{"error": message}`` with ``status``."""
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
