"""Release discovery: torch's releases and wheel files from a package index.

An index is read as one of two kinds: the JSON API at ``<URL>/pypi/<name>/json``, or a simple
index with the project's page at ``<URL>/<name>/``, PEP 691 JSON or PEP 503 HTML. ``auto`` reads a
URL whose path ends in ``/simple`` as a simple index, and any other as the JSON API, falling back
to the simple layout where the host has no JSON API (PyTorch's own indexes, nightlies included).
File URLs may be relative: they are resolved against the URL of the response that named them.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin

import requests
from packaging.tags import Tag, sys_tags
from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from repro.ledger import release_key
from repro.versions import parse as parse_version
from tracker.remote import Document, FetchError, Limits, Traffic, get, parse_json

SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
INDEX_KINDS = ("auto", "json", "simple")
NOT_THERE = (403, 404, 410)  # how hosts answer a path they lack; S3-backed ones (download.pytorch.org) say 403


@dataclass(frozen=True)
class WheelFile:
    filename: str
    url: str
    size: int | None
    yanked: bool


@dataclass(frozen=True)
class Release:
    version: Version
    wheels: tuple[WheelFile, ...]

    @property
    def yanked(self) -> bool:
        return bool(self.wheels) and all(w.yanked for w in self.wheels)


class _NoJsonApi(FetchError):
    """The host has no JSON API there: it answered 403, 404 or 410, or a page that is not JSON."""


def discover(
    session: requests.Session, index_url: str, traffic: Traffic, name: str = "torch", kind: str = "auto"
) -> list[Release]:
    """Every release of ``name`` the index lists, oldest first, one per ledger key: local builds
    (``+cpu``, ``+cu126``) are wheels of their public release. ``kind`` is one of INDEX_KINDS."""
    root = index_url.rstrip("/")
    if kind == "auto" and root.endswith("/simple"):
        kind = "simple"
    by_version: dict[Version, list[WheelFile]] = {}
    listed, files = _listing(session, root, name, traffic, kind)
    for text in listed:  # a release with no wheel still counts, as "unknown"
        try:
            by_version.setdefault(parse_version(release_key(text)), [])
        except InvalidVersion:
            continue
    for file in files:
        try:
            _, version, _, _ = parse_wheel_filename(file.filename)
        except (InvalidWheelFilename, ValueError):  # packaging's digit limit is a plain ValueError
            sdist = _sdist_version(file.filename)
            if sdist is not None:  # a release with only an sdist still counts, as "unknown" (no wheel)
                by_version.setdefault(parse_version(release_key(sdist)), [])
            continue
        by_version.setdefault(parse_version(release_key(str(version))), []).append(file)
    return [Release(v, tuple(by_version[v])) for v in sorted(by_version)]


@dataclass(frozen=True)
class Installability:
    """Whether the install index has a wheel of one release for the interpreter that will run it."""

    tag: str  # the runner's most specific tag (``cp311-cp311-manylinux_2_39_x86_64``): what it was decided for
    installable: bool
    wheel_tags: tuple[str, ...]  # the interpreter-abi pairs the release does have wheels for (``cp37-cp37m``)


def runner_tag() -> str:
    """This interpreter's most specific wheel tag: the throwaway environments run this interpreter."""
    return str(next(iter(sys_tags())))


def installability(session: requests.Session, install_index_url: str, version: str, traffic: Traffic) -> Installability:
    """Read the install index's file list for torch (a simple index: PEP 691 or 503) and match the
    release's wheels with ``packaging.tags.sys_tags()``: a release whose wheels are all for other
    interpreters or platforms is known before any install is tried. A ``FetchError`` means the index
    did not answer (an error of the run, never a try)."""
    files = _simple(session, f"{install_index_url.rstrip('/')}/torch/", traffic)
    key = release_key(version)
    supported = set(sys_tags())
    tags: set[Tag] = set()
    for file in files:
        try:
            _, wheel_version, _, wheel_tags = parse_wheel_filename(file.filename)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if release_key(wheel_version) == key:  # a yanked file still installs when pinned (PEP 592)
            tags |= set(wheel_tags)
    pairs = tuple(sorted({f"{t.interpreter}-{t.abi}" for t in tags}))
    # no file at all (not published there yet, say) decides nothing: the installer is asked, as before
    return Installability(runner_tag(), not tags or bool(tags & supported), pairs)


def _sdist_version(filename: str) -> Version | None:
    try:
        return parse_sdist_filename(filename)[1]
    except (InvalidSdistFilename, InvalidVersion):
        return None  # an oddly named file tells us nothing


def _listing(
    session: requests.Session, root: str, name: str, traffic: Traffic, kind: str
) -> tuple[list[str], list[WheelFile]]:
    """(the versions the JSON API lists, every file) from the index at ``root`` read as ``kind``; ``auto``
    falls back to the simple layout only on the JSON API's own answer, never on a guess from the URL."""
    if kind == "simple":
        return [], _simple(session, f"{root}/{name}/", traffic)
    try:
        return _json_api(session, f"{root}/pypi/{name}/json", traffic)
    except _NoJsonApi as missing:
        if kind == "json":
            raise
        try:
            return [], _simple(session, f"{root}/{name}/", traffic)
        except FetchError as err:
            raise FetchError(f"{root} has neither a JSON API ({missing}) nor a simple index page ({err})") from None


def _json_api(session: requests.Session, url: str, traffic: Traffic) -> tuple[list[str], list[WheelFile]]:
    try:
        response = get(session, url, traffic, Limits.from_env().max_index_bytes)
    except FetchError as err:
        if err.status in NOT_THERE:
            raise _NoJsonApi(str(err), err.status) from None
        raise
    media = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if media and media != "application/json" and not media.endswith("+json"):  # an HTML page, not an API
        raise _NoJsonApi(f"{url} answered {media}, not JSON")
    data = parse_json(response)
    releases = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(releases, dict) or not all(isinstance(files, list) for files in releases.values()):
        raise FetchError(f"{url} is not a JSON API answer (no 'releases' object of file lists)")
    return list(releases), _wheel_files(response, [f for files in releases.values() for f in files])


def _simple(session: requests.Session, url: str, traffic: Traffic) -> list[WheelFile]:
    response = get(session, url, traffic, Limits.from_env().max_index_bytes, Accept=f"{SIMPLE_JSON}, text/html;q=0.1")
    if response.headers.get("Content-Type", "").startswith(SIMPLE_JSON):
        data = parse_json(response)
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, list):
            raise FetchError(f"{response.url} is not a PEP 691 answer (no 'files' list)")
        return _wheel_files(response, files)
    parser = _Anchors()
    parser.feed(response.text)
    resolved = [(text, _resolve(response.url, href), yanked) for href, text, yanked in parser.anchors]
    return [WheelFile(text, url, None, yanked) for text, url, yanked in resolved if url]


def _wheel_files(response: Document, entries: list) -> list[WheelFile]:
    """File entries of the JSON API and PEP 691 (same keys), URLs resolved against the response. An entry
    whose filename is not a string or whose URL cannot be resolved names no wheel: it is skipped."""
    files = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        name, url = entry.get("filename"), _resolve(response.url, entry.get("url"))
        if isinstance(name, str) and url:
            files.append(WheelFile(name, url, _size(entry.get("size")), bool(entry.get("yanked"))))
    return files


def _resolve(base: str, href: object) -> str | None:
    """``href`` resolved against ``base``; None when it is not a string or not a URL (``http://[::1/``)."""
    if not isinstance(href, str):
        return None
    try:
        return urljoin(base, href.split("#")[0])
    except ValueError:
        return None


def _size(value: object) -> int | None:
    """A declared file size, or None where the index gives none usable (it caps --full-download)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class _Anchors(HTMLParser):
    """PEP 503: one <a href> per file, ``data-yanked`` marks a yanked one."""

    def __init__(self) -> None:
        super().__init__()
        self.anchors: list[tuple[str, str, bool]] = []
        self._current: tuple[str, bool] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            values = dict(attrs)
            self._current = (values.get("href") or "", "data-yanked" in values)

    def handle_data(self, data: str) -> None:
        if self._current and data.strip():
            href, yanked = self._current
            self.anchors.append((href, data.strip(), yanked))
            self._current = None
