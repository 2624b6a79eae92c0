"""A loopback server whose every answer a test scripts: redirects, drips, bombs, oversized ranges.

``IndexServer`` plays a well-behaved index with faults; this one plays a hostile server. A route
is a function of the request handler; ``hits`` and ``headers`` record what reached the server.
The same server stands in for an "outside" host when addressed as ``http://0.0.0.0:PORT``: the
connection stays local, but the tracker's loopback rule refuses that address.
"""

from __future__ import annotations

import gzip
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Route = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class HostileServer:
    routes: dict[str, Route] = field(default_factory=dict)  # path -> what to answer
    hits: Counter = field(default_factory=Counter)
    headers: list[dict[str, str]] = field(default_factory=list)  # request headers, in order

    def start(self) -> str:
        handler = type("Handler", (_Handler,), {"server_state": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads, self.httpd.block_on_close = True, False  # a dripping answer may outlive the test
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return f"http://127.0.0.1:{self.port}"

    @property
    def port(self) -> int:
        return self.httpd.server_port

    @property
    def outside(self) -> str:
        """This server under an address the URL policy refuses."""
        return f"http://0.0.0.0:{self.port}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    server_state: HostileServer

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        state = self.server_state
        state.hits[self.path] += 1
        state.headers.append(dict(self.headers))
        route = state.routes.get(self.path)
        try:
            route(self) if route else send(self, 404, b"not found")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up, as it should


def send(handler: BaseHTTPRequestHandler, status: int, body: bytes = b"", **headers: str) -> None:
    handler.send_response(status)
    headers = {"Content-Length": str(len(body))} | {key.replace("_", "-"): value for key, value in headers.items()}
    for key, value in headers.items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.write(body)


def answer(status: int, body: bytes = b"", **headers: str) -> Route:
    return lambda handler: send(handler, status, body, **headers)


def redirect(location: str, status: int = 302) -> Route:
    return answer(status, Location=location)


def gzip_bomb(size: int) -> Route:
    """``size`` zero bytes, sent gzip-compressed (about 1000 times smaller)."""
    return answer(200, gzip.compress(bytes(size)), Content_Encoding="gzip", Content_Type="application/json")


def drip(body: bytes, interval: float, status: int = 200, **headers: str) -> Route:
    """Headers at once, then the body one byte per ``interval``: no single read ever times out."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        send(handler, status, b"", Content_Length=str(len(body)), **headers)
        for byte in body:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(interval)

    return route


def sequence(*routes: Route) -> Route:
    """Each request gets the next route; the last one answers from then on."""
    pending = list(routes)
    return lambda handler: (pending.pop(0) if len(pending) > 1 else pending[0])(handler)


def ranges(data: bytes, overshoot: int = 0, trailing: int = 0, suffix: bool = True) -> Route:
    """Range answers for ``data`` that cover ``overshoot`` bytes more than was asked, and whose body
    carries ``trailing`` bytes beyond its Content-Range; suffix ranges rejected unless ``suffix``."""

    def route(handler: BaseHTTPRequestHandler) -> None:
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", handler.headers["Range"])
        assert match, f"malformed Range {handler.headers['Range']!r}"  # the clients under test send well-formed ones
        first, last = match.groups()
        if not first and not suffix:
            return send(handler, 416)
        if not first:
            first, last = max(0, len(data) - int(last) - overshoot), len(data) - 1
        else:
            first, last = int(first), min(int(last) + overshoot, len(data) - 1)
        send(handler, 206, data[first : last + 1] + bytes(trailing), Content_Range=f"bytes {first}-{last}/{len(data)}")

    return route
