"""HTTP for the tracker: a retrying session, the URL policy, limits, and a seekable range-reading file.

Every server is treated as possibly hostile. Each hop of a redirect is checked against the
URL policy (``check_url``), bodies are read one socket read at a time against a size cap and
a wall-clock deadline, and a ``Retry-After`` longer than allowed fails the request instead of
being slept. The caps are ``Limits``, read from the environment at call time.

``RangeFile`` lets the standard library's ``zipfile`` read a remote wheel's central
directory and a few members without downloading the wheel: every read becomes an
explicit ``Range`` request (with read-ahead, so a probe stays within a handful of
requests), and every answer is checked: 206 with the Content-Range we asked for and no
more, no transparent compression. A server that answers a range with 200 is stopped at once.
"""

from __future__ import annotations

import io
import ipaddress
import json
import os
import re
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url
from urllib3.util.retry import Retry

TIMEOUT = (5, 30)  # connect, read (seconds): each socket operation; Limits.deadline bounds the whole request
# What zipfile reads first of an archive without a comment: the end-of-central-directory record (22
# bytes), and before it a zip64 locator (20) and a zip64 record (56). The central directory it then
# reads in one piece, whose size that record gives; a comment costs one more exact read.
TAIL = 22 + 20 + 56
CHUNK = 64 * 1024  # the most one socket read returns
BODY_RETRIES = 3
MAX_REDIRECTS = 5
MiB = 1024 * 1024
T = TypeVar("T")


def _limit(default: float, env: str, meaning: str) -> Any:
    return field(default=default, metadata={"env": env, "meaning": meaning})


@dataclass(frozen=True)
class Limits:
    """What one hostile server can cost a run. Each default can be changed by its environment
    variable, read at call time (so a test can lower it); an invalid value is a one-sentence error."""

    max_index_bytes: int = _limit(
        64 * MiB,
        "REPRO_TRACKER_MAX_INDEX_BYTES",
        "decoded size of one index listing (JSON API, PEP 691 or PEP 503 page)",
    )
    max_api_bytes: int = _limit(1 * MiB, "REPRO_TRACKER_MAX_API_BYTES", "decoded size of one GitHub API answer")
    max_wheel_bytes: int = _limit(
        4096 * MiB,
        "REPRO_TRACKER_MAX_WHEEL_BYTES",
        "--full-download: bytes of one wheel (fewer where the index declares its size)",
    )
    max_member_bytes: int = _limit(
        8 * MiB, "REPRO_TRACKER_MAX_MEMBER_BYTES", "uncompressed size of one source file read out of a wheel"
    )
    deadline: float = _limit(
        300.0, "REPRO_TRACKER_DEADLINE", "seconds one request may take in all: redirects, retries and body"
    )
    max_retry_after: float = _limit(
        60.0, "REPRO_TRACKER_MAX_RETRY_AFTER", "longest Retry-After wait obeyed; a longer one fails the request"
    )
    retry_backoff: float = _limit(
        0.2, "REPRO_TRACKER_RETRY_BACKOFF", "urllib3's backoff factor: 2 and 4 times it before the 2nd and 3rd retry"
    )

    @classmethod
    def from_env(cls) -> Limits:
        return cls(
            **{
                f.name: _parse_limit(f.metadata["env"], type(f.default), os.environ[f.metadata["env"]])
                for f in fields(cls)
                if f.metadata["env"] in os.environ
            }
        )


def _parse_limit(env: str, kind: type, text: str) -> Any:  # an int or a float: ``kind``, the field's type
    try:
        value = kind(text)
    except ValueError:
        value = 0
    if not value > 0:  # also refuses nan
        raise FetchError(f"{env} must be a positive {kind.__name__}, not {text!r}")
    return value


# Anchored at the start of a scheme and possessive, so a long hostile string costs linear time.
_CREDENTIALS = re.compile(r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*+://)[^/?#\s]*@")


def redact(url: str) -> str:
    """``url`` (or any text with URLs in it) with each ``user:password@`` shown as ``***@``."""
    return _CREDENTIALS.sub(r"\1***@", url)


class FetchError(Exception):
    """The index or a file could not be fetched (one sentence). The message is redacted here,
    so no URL credentials reach a log or the ledger, whichever code built it. ``status`` is the HTTP
    status of an error answer, so a caller can tell "not there" from a failure."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(redact(message))
        self.status = status


class RangesUnsupported(FetchError):
    """The server ignored a Range header and started sending the whole file."""


class _RangeRejected(FetchError):
    """The server answered a range request with an error status (e.g. 416 for a suffix range)."""


class _WaitTooLong(FetchError):
    """The server asked for a Retry-After wait longer than ``Limits.max_retry_after``."""


@dataclass
class Traffic:
    requests: int = 0
    bytes: int = 0


@dataclass(frozen=True)
class Document:
    """A small fetched body and the URL it finally came from (relative links resolve against it)."""

    url: str
    headers: Mapping[str, str]
    content: bytes

    @property
    def text(self) -> str:
        """As UTF-8: index pages are, and wheel names are ASCII anyway."""
        return self.content.decode("utf-8", errors="replace")


def parse_json(document: Document) -> object:
    """The document's JSON, or one sentence on why it has none."""
    try:
        return json.loads(document.content)
    except ValueError:
        raise FetchError(f"{document.url} answered malformed JSON") from None
    except RecursionError:  # json recurses once per level: a small hostile answer can go deep
        raise FetchError(f"{document.url} answered JSON nested too deeply") from None


_POLICY = "only https, or http to loopback, is allowed"
_UNSAFE = re.compile(r"[\\\s\x00-\x1f\x7f]")


def _refusal(url: str) -> str | None:
    """Why ``url`` breaks the policy (only https, or http to loopback), judged on the host urllib3
    will connect to; None when it is allowed."""
    if _UNSAFE.search(url):
        return "it contains a backslash, whitespace or a control character"
    try:
        parsed, split_host = parse_url(url), urlsplit(url).hostname
    except (LocationParseError, ValueError):
        return "it is not a valid URL"
    host = (parsed.host or "").strip("[]")
    if parsed.scheme not in ("http", "https") or not host:
        return _POLICY
    if host != split_host:
        return f"its host is read as {host!r} by urllib3 but {split_host!r} by urllib"
    try:
        host.encode("idna")  # what urllib3 checks only when it connects, raising a ValueError
    except UnicodeError:
        return "its host has an empty or overlong label"
    return None if parsed.scheme == "https" or _is_loopback(host) else _POLICY


def _is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str) -> None:
    """Only https, or plain http to a loopback address (for tests)."""
    reason = _refusal(url)
    if reason:
        raise FetchError(f"refusing {url!r}: {reason}")


class _BoundedRetry(Retry):
    """urllib3's Retry, except that a Retry-After longer than ``Limits.max_retry_after`` fails the
    request at once (urllib3 would sleep up to six hours), and its backoff is ``Limits.retry_backoff``."""

    def sleep_for_retry(self, response: urllib3.BaseHTTPResponse) -> bool:
        wait, cap = self.get_retry_after(response), Limits.from_env().max_retry_after
        if wait is not None and wait > cap:
            raise _WaitTooLong(
                f"answered HTTP {response.status} asking to wait longer than the {cap:g} s allowed before retrying"
            )
        return super().sleep_for_retry(response)

    def get_backoff_time(self) -> float:
        self.backoff_factor = Limits.from_env().retry_backoff  # read when a retry waits, as every limit
        return super().get_backoff_time()


def make_session(retries: int = 3) -> requests.Session:
    """A session whose 5xx answers, timeouts and resets are retried with backoff by urllib3."""
    retry = _BoundedRetry(
        total=retries,
        connect=retries,
        read=retries,
        status=retries,
        status_forcelist=(500, 502, 503, 504),
        allowed_methods=frozenset({"GET"}),
        raise_on_status=False,
    )
    session = requests.Session()
    session.mount("https://", HTTPAdapter(max_retries=retry))
    session.mount("http://", HTTPAdapter(max_retries=retry))
    session.headers["User-Agent"] = "scriptmodule-hook-repro-tracker"
    return session


class _Deadline:
    """Wall-clock end of one request: socket timeouts bound each read, not a server that drips."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.end = seconds, time.monotonic() + seconds

    def timeout(self) -> tuple[float, float]:
        left = max(0.001, self.end - time.monotonic())
        return min(TIMEOUT[0], left), min(TIMEOUT[1], left)

    def check(self, what: str) -> None:
        if time.monotonic() > self.end:
            raise FetchError(f"{what} did not finish within {self.seconds:g} s")


def _causes(err: BaseException) -> list[BaseException]:
    """``err`` and what it wraps: the chain, urllib3's ``reason`` and exceptions passed as arguments."""
    found: list[BaseException] = []
    todo: list[BaseException] = [err]
    while todo and len(found) < 20:
        link = todo.pop(0)
        if link in found:
            continue
        found.append(link)
        todo += [e for e in (link.__cause__, link.__context__, getattr(link, "reason", None)) if e is not None]
        todo += [a for a in link.args if isinstance(a, BaseException)]
    return found


# What the innermost failure means, for one sentence (first match wins: the most specific cause first).
_CAUSES: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
    (socket.gaierror, "its name does not resolve"),
    (ConnectionRefusedError, "the connection was refused"),
    (ConnectionResetError, "the connection was reset"),
    ((urllib3.exceptions.ConnectTimeoutError, requests.exceptions.ConnectTimeout), "connecting timed out"),
    ((urllib3.exceptions.ReadTimeoutError, requests.exceptions.ReadTimeout), "it stopped answering (read timeout)"),
    ((urllib3.exceptions.SSLError, requests.exceptions.SSLError), "the TLS handshake failed"),
    (urllib3.exceptions.ProxyError, "the proxy refused or failed"),
    ((urllib3.exceptions.ProtocolError, requests.exceptions.ChunkedEncodingError), "the answer broke off"),
    (OSError, "the network failed"),
)


def network_error(url: str, err: BaseException) -> str:
    """One sentence within 100 columns naming the host and the cause (not urllib3's repr of its pool)."""
    parsed = parse_url(url)
    host = f"{parsed.host}:{parsed.port}" if parsed.host and parsed.port else parsed.host or "the server"
    chain = _causes(err)
    cause = next(
        (what for kind, what in _CAUSES if any(isinstance(link, kind) for link in chain)),
        type(chain[-1]).__name__,
    )
    retried = " after retries" if any(isinstance(link, urllib3.exceptions.MaxRetryError) for link in chain) else ""
    room = 100 - len("check_upstream: error: cannot reach : ") - len(cause) - len(retried)
    shown = host if len(host) <= room else host[: max(1, room - 1)] + "…"
    return f"cannot reach {shown}: {cause}{retried}"


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parsed = parse_url(url)
    return parsed.scheme or "", parsed.host, parsed.port


def _request(
    session: requests.Session, url: str, headers: dict[str, str], deadline: _Deadline, traffic: Traffic
) -> requests.Response:
    """GET ``url`` (streamed), following redirects here: each hop is checked by the URL policy, its
    body is never read, and Authorization never leaves the first origin. (requests would follow
    them unchecked and read each redirect's body whole.)"""
    check_url(url)
    for _ in range(MAX_REDIRECTS + 1):
        deadline.check(f"GET {url}")
        traffic.requests += 1
        try:
            response = session.get(url, headers=headers, timeout=deadline.timeout(), stream=True, allow_redirects=False)
        except _WaitTooLong as err:
            raise FetchError(f"GET {url} {err}") from None
        except requests.RequestException as err:
            raise FetchError(network_error(url, err)) from None
        if not response.is_redirect:
            return response
        response.close()
        target = urljoin(url, response.headers["Location"])
        reason = _refusal(target)
        if reason:
            raise FetchError(f"refusing the redirect from {url} to {target!r}: {reason}")
        if _origin(target) != _origin(url):
            headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        url = target
    raise FetchError(f"GET {url} redirected more than {MAX_REDIRECTS} times")


def _read(
    response: requests.Response, most: int, deadline: _Deadline, traffic: Traffic, what: str, decode: bool = True
) -> bytes:
    """Up to ``most`` bytes of the body (decoded if ``decode``), one socket read at a time (``read1``),
    so a gzip bomb stops at ``most`` and the deadline is checked even while a server drips."""
    body = bytearray()
    while len(body) < most:
        chunk = response.raw.read1(min(CHUNK, most - len(body)), decode_content=decode)
        if not chunk:
            break
        body += chunk
        traffic.bytes += len(chunk)
        deadline.check(what)
    return bytes(body)


class _BodyBroke(Exception):
    """The request was answered but its body broke off: urllib3 does not retry that, we do."""


def _with_body_retries(attempt: Callable[[], T]) -> T:
    """Call ``attempt`` (one request) up to BODY_RETRIES times while its body breaks off."""
    for remaining in reversed(range(BODY_RETRIES)):
        try:
            return attempt()
        except _BodyBroke as err:
            if not remaining:
                raise FetchError(str(err)) from None
    raise AssertionError("unreachable")


def get(session: requests.Session, url: str, traffic: Traffic, max_bytes: int, **headers: str) -> Document:
    """GET a document of at most ``max_bytes`` (decoded) within the deadline. Connecting and 5xx
    answers are retried by urllib3; a body that breaks off afterwards is retried here, as a whole."""
    deadline = _Deadline(Limits.from_env().deadline)

    def attempt() -> Document:
        with _request(session, url, headers, deadline, traffic) as response:
            if response.status_code != 200:
                raise FetchError(f"GET {url} answered HTTP {response.status_code}", response.status_code)
            try:
                content = _read(response, max_bytes + 1, deadline, traffic, f"GET {url}")
            except (requests.RequestException, urllib3.exceptions.HTTPError) as err:
                raise _BodyBroke(f"GET {url} broke off: {err}") from None
            if len(content) > max_bytes:
                raise FetchError(f"GET {url} answered more than {max_bytes} bytes; the rest was not read")
            return Document(response.url, response.headers, content)

    return _with_body_retries(attempt)


_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


class RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file made of HTTP range requests."""

    def __init__(self, session: requests.Session, url: str, traffic: Traffic) -> None:
        self.session, self.url, self.traffic = session, url, traffic
        self.pos = 0
        self.segments: list[tuple[int, bytes]] = []
        self.size = self._open()

    def _open(self) -> int:
        """Learn the size with a suffix range (fetching the tail zipfile reads first);
        fall back to ``bytes=0-0`` where suffix ranges are rejected."""
        try:
            start, data, size = self._fetch(None, TAIL)
        except _RangeRejected:  # e.g. 416: this server rejects suffix ranges
            start, data, size = self._fetch(0, 1)
            if size > 1:
                tail_start = max(0, size - TAIL)
                start, data, _ = self._fetch(tail_start, size - tail_start)
        self.segments.append((start, data))
        return size

    def _fetch(self, start: int | None, length: int) -> tuple[int, bytes, int]:
        """``length`` bytes from ``start``, or the last ``length`` when ``start`` is None (a suffix
        range): (first offset, bytes, file size). Never reads more of a body than was asked."""
        spec = f"bytes=-{length}" if start is None else f"bytes={start}-{start + length - 1}"
        deadline = _Deadline(Limits.from_env().deadline)
        what = f"range {spec} of {self.url}"

        def attempt() -> tuple[int, bytes, int]:
            try:
                with _request(
                    self.session, self.url, {"Range": spec, "Accept-Encoding": "identity"}, deadline, self.traffic
                ) as resp:
                    first, last, size = self._check(resp, spec, start, length)
                    data = _read(resp, last - first + 1, deadline, self.traffic, what, decode=False)
            except (requests.RequestException, urllib3.exceptions.HTTPError) as err:
                raise _BodyBroke(f"{what} failed: {err}") from None
            if len(data) != last - first + 1:
                raise _BodyBroke(f"{what} broke off after {len(data)} bytes")
            return first, data, size

        return _with_body_retries(attempt)

    def _check(self, resp: requests.Response, spec: str, start: int | None, length: int) -> tuple[int, int, int]:
        """(first, last, size) of a range answer, or one sentence on what is wrong with it."""
        if resp.status_code == 200:
            raise RangesUnsupported(f"{self.url} ignores Range requests (HTTP 200 with the whole file)")
        if resp.status_code != 206:
            raise _RangeRejected(f"range {spec} of {self.url} answered HTTP {resp.status_code}")
        if resp.headers.get("Content-Encoding", "identity") != "identity":
            raise FetchError(f"{self.url} compressed a range response; offsets would shift")
        match = _CONTENT_RANGE.fullmatch(resp.headers.get("Content-Range", ""))
        if not match or match.group(3) == "*":
            raise FetchError(f"range {spec} of {self.url} came without a usable Content-Range")
        first, last, size = (int(g) for g in match.groups())
        misplaced = last != size - 1 if start is None else first != start
        if misplaced or not first <= last < min(size, first + length):  # nothing more than asked
            raise FetchError(f"asked {self.url} for {spec}, got bytes {first}-{last} of {size}")
        return first, last, size

    def prefetch(self, spans: list[tuple[int, int]]) -> None:
        """Fetch each ``(start, end)`` span in one request, so that the reads inside it cost none. A span
        outside the file (a directory that lies about offsets) is left to fail where it is read."""
        for start, end in spans:
            if not 0 <= start < end <= self.size:
                continue
            if not any(first <= start and end <= first + len(data) for first, data in self.segments):
                self.segments.append(self._fetch(start, end - start)[:2])

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

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.size - self.pos)
        if want <= 0:
            return 0
        for start, data in self.segments:
            if start <= self.pos and self.pos + want <= start + len(data):
                chunk = data[self.pos - start : self.pos - start + want]
                break
        else:  # exactly what was asked: what zipfile reads past the tail is the directory, in one read
            start, data, _ = self._fetch(self.pos, want)
            self.segments.append((start, data))
            chunk = data
        buffer[:want] = chunk
        self.pos += want
        return want
