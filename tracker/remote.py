"""HTTP for the tracker: a retrying session, the URL policy, and a seekable range-reading file.

``RangeFile`` lets the standard library's ``zipfile`` read a remote wheel's central
directory and a few members without downloading the wheel: every read becomes an
explicit ``Range`` request (with read-ahead, so a probe stays within a handful of
requests), and every answer is checked: 206 with the Content-Range we asked for, no
transparent compression. A server that answers a range with 200 is stopped at once.
"""

from __future__ import annotations

import io
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

TIMEOUT = (5, 30)  # connect, read (seconds)
READ_AHEAD = 256 * 1024
TAIL = 64 * 1024  # the zip end record and a zip64 locator sit in the last 64 KiB
BODY_RETRIES = 3
T = TypeVar("T")


class FetchError(Exception):
    """The index or a file could not be fetched (one sentence)."""


class RangesUnsupported(FetchError):
    """The server ignored a Range header and started sending the whole file."""


@dataclass
class Traffic:
    requests: int = 0
    bytes: int = 0


def check_url(url: str) -> None:
    """Only https, or plain http to a loopback address (for tests)."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return
    host = parts.hostname or ""
    loopback = host == "localhost"
    try:
        loopback = loopback or ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    if not (parts.scheme == "http" and loopback):
        raise FetchError(f"refusing {url!r}: only https, or http to loopback, is allowed")


def make_session(retries: int = 3, backoff: float = 0.2) -> requests.Session:
    """A session whose 5xx answers, timeouts and resets are retried with backoff by urllib3."""
    retry = Retry(
        total=retries, connect=retries, read=retries, status=retries, backoff_factor=backoff,
        status_forcelist=(500, 502, 503, 504), allowed_methods=frozenset({"GET"}),
        raise_on_status=False,
    )
    session = requests.Session()
    session.mount("https://", HTTPAdapter(max_retries=retry))
    session.mount("http://", HTTPAdapter(max_retries=retry))
    session.headers["User-Agent"] = "scriptmodule-hook-repro-tracker"
    return session


class _BodyBroke(Exception):
    """The request was answered but its body broke off: urllib3 does not retry that, we do."""


def _with_body_retries(attempt: Callable[[], T], traffic: Traffic) -> T:
    """Call ``attempt`` (one request) up to BODY_RETRIES times while its body breaks off."""
    for remaining in reversed(range(BODY_RETRIES)):
        traffic.requests += 1
        try:
            return attempt()
        except _BodyBroke as err:
            if not remaining:
                raise FetchError(str(err)) from None
    raise AssertionError("unreachable")


def get(session: requests.Session, url: str, traffic: Traffic, **headers: str) -> requests.Response:
    """GET a small document (index pages). Connecting and 5xx answers are retried by urllib3;
    a body that breaks off afterwards is retried here, as a whole."""
    check_url(url)

    def attempt() -> requests.Response:
        try:
            response = session.get(url, headers=headers, timeout=TIMEOUT, stream=True)
        except requests.RequestException as err:
            raise FetchError(f"GET {url} failed: {err}") from None
        try:
            traffic.bytes += len(response.content)  # the body, read apart from the urllib3-retried request
        except (requests.RequestException, urllib3.exceptions.HTTPError) as err:
            raise _BodyBroke(f"GET {url} broke off: {err}") from None
        if response.status_code != 200:
            raise FetchError(f"GET {url} answered HTTP {response.status_code}")
        return response

    return _with_body_retries(attempt, traffic)


_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


class RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file made of HTTP range requests."""

    def __init__(self, session: requests.Session, url: str, traffic: Traffic) -> None:
        check_url(url)
        self.session, self.url, self.traffic = session, url, traffic
        self.pos = 0
        self.segments: list[tuple[int, bytes]] = []
        self.size = self._open()

    def _open(self) -> int:
        """Learn the size with a suffix range (fetching the tail zipfile reads first);
        fall back to ``bytes=0-0`` where suffix ranges are rejected."""
        try:
            start, data, size = self._fetch(f"bytes=-{TAIL}")
        except RangesUnsupported:
            raise
        except FetchError:  # e.g. 416: this server rejects suffix ranges
            start, data, size = self._fetch("bytes=0-0")
            if size > 1:
                tail_start = max(0, size - TAIL)
                start, data, _ = self._fetch(f"bytes={tail_start}-{size - 1}", tail_start)
        self.segments.append((start, data))
        return size

    def _fetch(self, spec: str, expect_start: int | None = None) -> tuple[int, bytes, int]:
        def attempt() -> tuple[int, bytes, int]:
            try:
                with self.session.get(self.url, timeout=TIMEOUT, stream=True,
                                      headers={"Range": spec, "Accept-Encoding": "identity"}) as resp:
                    start, end, size = self._check(resp, spec, expect_start)
                    data = resp.raw.read(decode_content=False)
            except (requests.RequestException, urllib3.exceptions.HTTPError) as err:
                raise _BodyBroke(f"range {spec} of {self.url} failed: {err}") from None
            self.traffic.bytes += len(data)
            if len(data) != end - start + 1:
                raise _BodyBroke(f"range {spec} of {self.url} broke off after {len(data)} bytes")
            return start, data, size

        return _with_body_retries(attempt, self.traffic)

    def _check(self, resp: requests.Response, spec: str, expect_start: int | None) -> tuple[int, int, int]:
        """(start, end, size) of a range answer, or one sentence on what is wrong with it."""
        if resp.status_code == 200:
            raise RangesUnsupported(f"{self.url} ignores Range requests (HTTP 200 with the whole file)")
        if resp.status_code != 206:
            raise FetchError(f"range {spec} of {self.url} answered HTTP {resp.status_code}")
        if resp.headers.get("Content-Encoding", "identity") != "identity":
            raise FetchError(f"{self.url} compressed a range response; offsets would shift")
        match = _CONTENT_RANGE.fullmatch(resp.headers.get("Content-Range", ""))
        if not match or match.group(3) == "*":
            raise FetchError(f"range {spec} of {self.url} came without a usable Content-Range")
        start, end, size = (int(g) for g in match.groups())
        if expect_start is not None and start != expect_start:
            raise FetchError(f"asked {self.url} for {spec}, got bytes {start}-{end}")
        return start, end, size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def readinto(self, buffer) -> int:
        want = min(len(buffer), self.size - self.pos)
        if want <= 0:
            return 0
        for start, data in self.segments:
            if start <= self.pos and self.pos + want <= start + len(data):
                chunk = data[self.pos - start:self.pos - start + want]
                break
        else:
            end = min(self.size, self.pos + max(want, READ_AHEAD)) - 1
            start, data, _ = self._fetch(f"bytes={self.pos}-{end}", self.pos)
            self.segments.append((start, data))
            chunk = data[:want]
        buffer[:want] = chunk
        self.pos += want
        return want
