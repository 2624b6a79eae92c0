"""Read the few source files the verdict needs out of a remote torch wheel, without installing it.

The wheel is opened with ``zipfile`` over a ``RangeFile``: the end record, the central directory in
one exact read, then the members below, those that lie close together in one request each. The
bytes are only decoded, as Python decodes a source file (a BOM or a PEP 263 coding line, else
UTF-8), and handed to each bug's static signature; nothing is imported.

Content that cannot be judged makes the release ``unknown`` with the reason, final: a member larger
than ``Limits.max_member_bytes`` (a zip bomb: torch's sources are under 1 MB; it is not read), one that
is not Python source, sources nested too deeply or too large for ``ast``. A member that cannot be read
(a broken transfer, corrupt compressed data, a CRC mismatch) is a ``FetchError``: retried next run.
"""

from __future__ import annotations

import io
import tokenize
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import requests
from packaging.utils import parse_wheel_filename

from repro.source_checks import MODULE_PY, RECURSIVE_PY, SCRIPT_PY, StaticVerdict
from repro.vocabulary import StaticStatus
from tracker.index import WheelFile
from tracker.remote import FetchError, Limits, RangeFile, Traffic, get

MEMBERS = (RECURSIVE_PY, SCRIPT_PY, MODULE_PY)  # what the bugs' signatures read; the version is in the file name
NEAR = 32 * 1024  # members this close together are read in one request: a request costs more than this


@dataclass(frozen=True)
class Fetched:
    wheel: WheelFile
    wheel_size: int
    sources: dict[str, str | None]  # member -> text, None when the wheel lacks it
    problem: str | None  # why the sources could not be read at all


def choose_wheel(wheels: tuple[WheelFile, ...]) -> WheelFile | None:
    """One wheel per release: Linux x86-64 first, then other Linux, then anything."""

    def rank(wheel: WheelFile) -> int:
        platforms = {tag.platform for tag in parse_wheel_filename(wheel.filename)[3]}
        if any("linux" in p and "x86_64" in p for p in platforms):
            return 0
        return 1 if any("linux" in p for p in platforms) else 2

    usable = [w for w in wheels if not w.yanked]
    return min(usable, key=lambda w: (rank(w), w.filename)) if usable else None


def fetch_sources(
    session: requests.Session, wheel: WheelFile, traffic: Traffic, full_download: bool = False
) -> Fetched:
    """Range-read ``MEMBERS`` from ``wheel`` (or, only if asked, download it whole: no more than the
    size the index declared, or ``Limits.max_wheel_bytes`` where it declared none)."""
    limits = Limits.from_env()
    if full_download:
        cap = min(wheel.size or limits.max_wheel_bytes, limits.max_wheel_bytes)
        whole = io.BytesIO(get(session, wheel.url, traffic, cap).content)
        size = len(whole.getbuffer())
        remote: io.IOBase = whole
    else:
        remote = RangeFile(session, wheel.url, traffic)
        size = remote.size
    try:
        archive = zipfile.ZipFile(remote)
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        return Fetched(wheel, size, {}, f"the wheel's zip directory is unreadable: {err}")
    sources: dict[str, str | None] = {}
    names = set(archive.namelist())
    if isinstance(remote, RangeFile):
        remote.prefetch(coalesce(member_spans(archive, [m for m in MEMBERS if m in names], limits.max_member_bytes)))
    for member in MEMBERS:
        try:
            sources[member] = _read_member(archive, member, limits.max_member_bytes) if member in names else None
        except _Unjudgeable as err:
            return Fetched(wheel, size, sources, str(err))
    return Fetched(wheel, size, sources, None)


def member_spans(archive: zipfile.ZipFile, members: list[str], cap: int) -> list[tuple[int, int]]:
    """Where each member's local header and data lie: from its header to the next entry's header (or
    the central directory), bounded by what its sizes allow. Members over ``cap`` are left out: they
    are refused unread."""
    starts = sorted({info.header_offset for info in archive.infolist()} | {archive.start_dir})
    spans = []
    for member in members:
        info = archive.getinfo(member)
        if info.file_size > cap:
            continue
        following = next(offset for offset in starts if offset > info.header_offset)
        longest = 30 + len(info.orig_filename.encode()) + 0xFFFF + info.compress_size + 16  # extra field, descriptor
        spans.append((info.header_offset, min(following, info.header_offset + longest)))
    return spans


def coalesce(spans: list[tuple[int, int]], near: int = NEAR) -> list[tuple[int, int]]:
    """Spans less than ``near`` bytes apart merged into one: fewer requests for a few bytes more."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start - merged[-1][1] < near:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def judge(sources: dict[str, str | None], signature: Callable[[dict[str, str | None]], StaticVerdict]) -> StaticVerdict:
    """One bug's static ``signature`` (its ``Bug.static``; no bug's is the default), with what ``ast``
    refuses to build (too deep, too large) made ``unknown``: such a wheel will not parse any better
    next run."""
    try:
        return signature(sources)
    except (RecursionError, MemoryError, SyntaxError) as err:
        return StaticVerdict(
            StaticStatus.UNKNOWN, [f"the sources are too deeply nested or too large to analyse ({type(err).__name__})"]
        )


class _Unjudgeable(Exception):
    """A member's content cannot be judged (too large, not Python): the release is unknown, final."""


def _read_member(archive: zipfile.ZipFile, member: str, cap: int) -> str:
    """The member's text, refused before reading when it declares more than ``cap`` bytes. The read is
    bounded too: zipfile stops at the declared size and fails the CRC when the data runs longer."""
    declared = archive.getinfo(member).file_size
    if declared > cap:
        raise _Unjudgeable(f"{member} declares {declared} bytes uncompressed, more than the {cap}-byte limit")
    try:
        with archive.open(member) as stream:
            data = stream.read(cap)
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as err:
        raise FetchError(f"{member} is unreadable: {err}") from None
    return _decode(member, data)


def _decode(member: str, data: bytes) -> str:
    """``data`` as Python decodes a source file: a BOM or a PEP 263 coding line names the encoding."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError) as err:
        raise _Unjudgeable(f"{member} is not Python source: {err}") from None
