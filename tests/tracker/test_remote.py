"""The tracker's network layer against hostile servers, all on loopback (issue 8).

An "outside" host is ``http://0.0.0.0:PORT``: the connection stays on this machine, but the URL
policy refuses it, so a hit there means the policy was bypassed. Limits are lowered through
their environment variables so that every test stays fast.
"""

from __future__ import annotations

import io
import json
import time
from types import SimpleNamespace

import pytest
import urllib3
from hostile_server import HostileServer, answer, drip, gzip_bomb, ranges, redirect, sequence
from index_server import BUGGY, Faults, build_wheel, shape
from packaging.version import Version
from tracker_helpers import check_upstream_cli

from helpers import first_quick, flag, run, write_ledger
from tracker.index import Release, WheelFile, discover
from tracker.probe import fetch_sources
from tracker.remote import TAIL, FetchError, Limits, RangeFile, Traffic, check_url, get, make_session, redact
from tracker.sweep import static_entry
from tracker.upstream_issue import issue_state

WHEEL = "torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl"
ISSUE = "/repos/pytorch/pytorch/issues/1"


def listing(url: str) -> list[Release]:
    return discover(make_session(), url, Traffic())


def range_file(url: str, traffic: Traffic | None = None) -> RangeFile:
    return RangeFile(make_session(), url, traffic or Traffic())


# 1. Every redirect hop is checked against the URL policy.


def test_index_redirect_to_an_outside_host_is_refused(server):
    server.routes["/pypi/torch/json"] = redirect(f"{server.outside}/elsewhere")
    with pytest.raises(FetchError, match="refusing the redirect .* only https, or http to loopback"):
        listing(server.url)
    assert server.hits["/elsewhere"] == 0


def test_range_redirect_to_an_outside_host_is_refused(server):
    server.routes["/files/x.whl"] = redirect(f"{server.outside}/elsewhere.whl", 307)
    with pytest.raises(FetchError, match="refusing the redirect"):
        range_file(f"{server.url}/files/x.whl")
    assert server.hits["/elsewhere.whl"] == 0


def test_redirects_within_the_policy_are_followed_and_counted(server):
    data = bytes(range(256)) * 400
    server.routes["/files/x.whl"] = redirect("/real/x.whl", 301)
    server.routes["/real/x.whl"] = ranges(data)
    traffic = Traffic()
    remote = range_file(f"{server.url}/files/x.whl", traffic)
    assert remote.size == len(data) and traffic.requests == 2 and traffic.bytes == TAIL


def test_redirect_loop_stops(server):
    server.routes["/pypi/torch/json"] = redirect("/pypi/torch/json")
    with pytest.raises(FetchError, match="redirected more than 5 times"):
        listing(server.url)
    assert server.hits["/pypi/torch/json"] == 6


def test_refused_redirect_is_one_line_and_exit_1(server, tmp_path):
    server.routes["/pypi/torch/json"] = redirect(f"{server.outside}/elsewhere")
    proc = check_upstream_cli(server.url, ledger=write_ledger(tmp_path / "ledger.json"))
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "refusing the redirect" in proc.stderr


# 2. URLs are judged by the host urllib3 connects to; ambiguous ones are refused.


@pytest.mark.parametrize(
    "tail",
    ["\\@127.0.0.1/", "/\tx", "/ x", "/\nx", "/\x7fx", "/\x00x"],
    ids=["backslash", "tab", "space", "newline", "del", "nul"],
)
def test_ambiguous_urls_are_refused(server, tail):
    url = f"{server.outside}{tail}" if tail.startswith("\\") else f"{server.url}{tail}"
    with pytest.raises(FetchError, match="backslash, whitespace or a control character"):
        listing(url)
    assert not server.hits  # urllib3 would have connected to 0.0.0.0 for the backslash


@pytest.mark.parametrize(
    "url",
    [
        "https://pypi.org/simple/",
        "http://127.0.0.1:1/",
        "http://[::1]:1/",
        "http://localhost/",
        "http://user:pw@127.0.0.1/",
    ],
)
def test_policy_still_allows(url):
    check_url(url)


# 3. Secrets: the GitHub token and credentials in URLs.


def test_token_with_a_trailing_newline_is_stripped_and_sent(index, monkeypatch):
    index.issues[ISSUE] = {"state": "open"}
    monkeypatch.setenv("GITHUB_TOKEN", "s3cr3t-token\r\n")
    state = issue_state(make_session(), index.url, "pytorch/pytorch#1", "now")
    assert state["state"] == "open" and index.authorizations == ["Bearer s3cr3t-token"]


def test_token_is_masked_in_its_escaped_form(index, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "s3cr3t\x01token\n")  # an invalid header: requests quotes it back
    state = issue_state(make_session(), index.url, "pytorch/pytorch#1", "now")
    assert state["state"] == "unknown" and "s3cr3t" not in state["error"] and "token" not in state["error"]


def test_token_stays_off_a_redirect_to_another_origin(server, monkeypatch):
    other = HostileServer()
    other.start()
    try:
        server.routes[ISSUE] = redirect(f"http://localhost:{other.port}{ISSUE}")
        other.routes[ISSUE] = answer(200, b'{"state": "closed"}')
        monkeypatch.setenv("GITHUB_TOKEN", "s3cr3t-token")
        state = issue_state(make_session(), server.url, "pytorch/pytorch#1", "now")
    finally:
        other.stop()
    assert state["state"] == "closed"
    assert server.headers[0]["Authorization"] == "Bearer s3cr3t-token" and "Authorization" not in other.headers[0]


def test_non_object_api_answer_is_unknown(server):
    server.routes[ISSUE] = answer(200, b"[]")
    state = issue_state(make_session(), server.url, "pytorch/pytorch#1", "now")
    assert state["state"] == "unknown" and "not an issue object" in state["error"]


def test_redact():
    assert redact("GET http://user:pw@127.0.0.1:8/x failed") == "GET http://***@127.0.0.1:8/x failed"
    assert redact("https://pypi.org/simple/") == "https://pypi.org/simple/"


def with_credentials(url: str) -> str:
    return url.replace("http://", "http://user:hunter2@")


@pytest.mark.parametrize("case", ["malformed-index", "http-404", "refused", "full-download"])
def test_credentials_never_reach_a_message(index, case):
    index.raw_index = b"{not json"
    with pytest.raises(FetchError) as raised:
        if case == "malformed-index":  # the message is built in index.py from the response URL
            listing(with_credentials(index.url))
        elif case == "http-404":
            listing(with_credentials(f"{index.url}/nothing"))
        elif case == "refused":
            check_url(with_credentials(index.url).replace("127.0.0.1", "0.0.0.0"))
        else:
            wheel = WheelFile(WHEEL, with_credentials(f"{index.url}/files/{WHEEL}"), 10, False)
            fetch_sources(make_session(), wheel, Traffic(), full_download=True)
    assert "hunter2" not in str(raised.value) and "***@" in str(raised.value)


# 5. Bodies are capped, decoded size, read in chunks.


def test_gzip_bomb_index_stops_at_the_cap(server, monkeypatch):
    monkeypatch.setenv("REPRO_TRACKER_MAX_INDEX_BYTES", "65536")
    server.routes["/pypi/torch/json"] = gzip_bomb(16 * 1024 * 1024)
    traffic = Traffic()
    with pytest.raises(FetchError, match="more than 65536 bytes"):
        discover(make_session(), server.url, traffic)
    assert traffic.bytes <= 65537


def test_oversized_api_answer_is_unknown(server, monkeypatch):
    monkeypatch.setenv("REPRO_TRACKER_MAX_API_BYTES", "1000")
    server.routes[ISSUE] = answer(200, b'{"state": "open", "title": "%s"}' % (b"x" * 5000))
    state = issue_state(make_session(), server.url, "pytorch/pytorch#1", "now")
    assert state["state"] == "unknown" and "more than 1000 bytes" in state["error"]


@pytest.mark.parametrize("declared", [1000, None], ids=["declared-size", "wheel-cap"])
def test_full_download_is_capped(index, monkeypatch, declared):
    monkeypatch.setenv("REPRO_TRACKER_MAX_WHEEL_BYTES", "2000")
    index.wheels[WHEEL] = build_wheel(BUGGY, padding=64 * 1024)
    index.faults = Faults(ranges=False)
    traffic = Traffic()
    wheel = WheelFile(WHEEL, f"{index.url}/files/{WHEEL}", declared, False)
    with pytest.raises(FetchError, match=f"more than {declared or 2000} bytes"):
        fetch_sources(make_session(), wheel, traffic, full_download=True)
    assert traffic.bytes <= (declared or 2000) + 1


@pytest.mark.parametrize("value", ["soon", "0", "-1", "nan"])
def test_invalid_limit_is_one_sentence(index, monkeypatch, value):
    monkeypatch.setenv("REPRO_TRACKER_DEADLINE", value)
    with pytest.raises(FetchError, match=f"REPRO_TRACKER_DEADLINE must be a positive float, not '{value}'"):
        get(make_session(), index.url, Traffic(), 100)


def test_limits_default_and_read_at_call_time(monkeypatch):
    monkeypatch.delenv("REPRO_TRACKER_RETRY_BACKOFF", raising=False)  # tests/conftest.py sets it
    assert Limits.from_env() == Limits()
    monkeypatch.setenv("REPRO_TRACKER_MAX_MEMBER_BYTES", "123")
    assert Limits.from_env().max_member_bytes == 123


# 6. A range answer never covers more than was asked, and no more of its body is read.


def test_suffix_answer_longer_than_asked_is_refused(server):
    server.routes["/x.whl"] = ranges(bytes(200_000), overshoot=1000)
    with pytest.raises(FetchError, match=f"asked .* for bytes=-{TAIL}, got bytes"):
        range_file(f"{server.url}/x.whl")


def test_range_answer_past_the_requested_end_is_refused(server):
    server.routes["/x.whl"] = ranges(bytes(200_000), overshoot=1000, suffix=False)
    with pytest.raises(FetchError, match="asked .* for bytes=0-0, got bytes 0-1000 of 200000"):
        range_file(f"{server.url}/x.whl")


def test_body_beyond_the_content_range_is_not_read(server):
    data = bytes(range(256)) * 400
    server.routes["/x.whl"] = ranges(data, trailing=1024 * 1024)
    traffic = Traffic()
    remote = range_file(f"{server.url}/x.whl", traffic)
    remote.seek(-10, io.SEEK_END)
    assert remote.read() == data[-10:] and traffic.bytes == TAIL and traffic.requests == 1


# 7. Zip bombs: a member larger than the cap is not read; the release is unknown with the reason.

BOMB = BUGGY["torch/jit/_script.py"] + "#" * 50_000  # build_wheel repeats it 20 times: 1 MB, deflated to 2 KB


def bomb_wheel() -> bytes:
    return build_wheel(shape(**{"torch/jit/_script.py": BOMB}), padding=1024)


def test_member_declaring_more_than_the_cap_is_not_read(index, monkeypatch):
    monkeypatch.setenv("REPRO_TRACKER_MAX_MEMBER_BYTES", "100000")
    index.wheels[WHEEL] = bomb_wheel()
    wheel = WheelFile(WHEEL, f"{index.url}/files/{WHEEL}", None, False)
    release = Release(Version("2.13.0"), (wheel,))
    entry = static_entry(release, False, make_session)
    assert (
        flag(entry)["static"]["verdict"] == "unknown" and "error" not in entry
    )  # judged unknowable, not a fetch error
    assert flag(entry)["static"]["evidence"] == [
        f"torch/jit/_script.py declares {len(BOMB) * 20} bytes uncompressed, more than the 100000-byte limit"
    ]


def test_member_lying_about_its_size_is_unreadable(index):
    """Read no further than declared, it fails its CRC: an error of the run (retried), not a verdict."""
    data = bytearray(bomb_wheel())
    entry = data.rfind(b"PK\x01\x02", 0, data.rfind(b"torch/jit/_script.py"))  # its central directory record
    data[entry + 24 : entry + 28] = (100).to_bytes(4, "little")  # declares 100 bytes uncompressed
    index.wheels[WHEEL] = bytes(data)
    with pytest.raises(FetchError) as raised:
        fetch_sources(make_session(), WheelFile(WHEEL, f"{index.url}/files/{WHEEL}", None, False), Traffic())
    assert str(raised.value) == "torch/jit/_script.py is unreadable: Bad CRC-32 for file 'torch/jit/_script.py'"


# 8. Every request has a wall-clock deadline, however slowly the server drips.


def test_dripping_index_hits_the_deadline(server, monkeypatch):
    monkeypatch.setenv("REPRO_TRACKER_DEADLINE", "0.5")
    server.routes["/pypi/torch/json"] = drip(b"x" * 60, 0.05)
    started = time.monotonic()
    with pytest.raises(FetchError, match="did not finish within 0.5 s"):
        listing(server.url)
    assert time.monotonic() - started < 1.5


def test_dripping_range_hits_the_deadline(server, monkeypatch):
    monkeypatch.setenv("REPRO_TRACKER_DEADLINE", "0.5")
    server.routes["/x.whl"] = drip(bytes(TAIL), 0.05, 206, Content_Range=f"bytes 0-{TAIL - 1}/{TAIL}")
    started = time.monotonic()
    with pytest.raises(FetchError, match=f"range bytes=-{TAIL} of .* did not finish within 0.5 s"):
        range_file(f"{server.url}/x.whl")
    assert time.monotonic() - started < 1.5


# 9. Retry-After is obeyed up to a cap; a longer wait fails the request at once.


@pytest.fixture
def sleeps(monkeypatch):
    """urllib3's retry sleeps, recorded instead of slept."""
    slept: list[float] = []
    monkeypatch.setattr(urllib3.util.retry, "time", SimpleNamespace(sleep=slept.append, time=time.time))
    return slept


@pytest.mark.parametrize("status", [503, 429])
def test_long_retry_after_fails_at_once(server, monkeypatch, sleeps, status):
    monkeypatch.setenv("REPRO_TRACKER_MAX_RETRY_AFTER", "2")
    server.routes["/pypi/torch/json"] = answer(status, b"busy", Retry_After="99999")
    with pytest.raises(FetchError, match=f"answered HTTP {status} asking to wait longer than the 2 s allowed"):
        listing(server.url)
    assert sleeps == [] and server.hits["/pypi/torch/json"] == 1


def test_short_retry_after_is_obeyed(server, monkeypatch, sleeps):
    monkeypatch.setenv("REPRO_TRACKER_MAX_RETRY_AFTER", "2")
    server.routes["/pypi/torch/json"] = sequence(
        answer(503, b"busy", Retry_After="1"), answer(200, b'{"releases": {}}')
    )
    assert listing(server.url) == [] and sleeps == [1]


@pytest.mark.parametrize(("factor", "waits"), [(None, [0.4, 0.8]), ("0.5", [1.0, 2.0])], ids=["default", "set"])
def test_the_waits_between_retries_follow_the_backoff_limit(server, monkeypatch, sleeps, factor, waits):
    """The suite sets a tiny backoff for its own speed (tests/conftest.py); the default is 0.2."""
    monkeypatch.delenv("REPRO_TRACKER_RETRY_BACKOFF", raising=False)
    if factor:
        monkeypatch.setenv("REPRO_TRACKER_RETRY_BACKOFF", factor)
    busy = answer(503, b"busy")
    server.routes["/pypi/torch/json"] = sequence(busy, busy, busy, answer(200, b'{"releases": {}}'))
    assert listing(server.url) == [] and sleeps == waits and server.hits["/pypi/torch/json"] == 4


# 10. Text a server sends is printed with its control characters shown as escapes (issue 20).

ESCAPES = "\x1b[2J\x1b[32mall good\x1b[8m hidden\x9b31m"


@pytest.mark.parametrize(
    "program",
    first_quick([["tracker.check_upstream"], ["tracker.matrix", "plan", "--torch", "newest", "--python", "3.11"]]),
    ids=["check_upstream", "matrix-plan"],
)
def test_a_content_type_with_escapes_is_printed_inert(server, tmp_path, program):
    server.routes["/pypi/torch/json"] = answer(200, b"<html></html>", Content_Type=f"text/{ESCAPES}")
    proc = run(["-m", *program, "--index-url", server.url], ledger=write_ledger(tmp_path / "ledger.json"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "\x1b" not in proc.stderr + proc.stdout and "\x9b" not in proc.stderr + proc.stdout
    assert "text/\\x1b[2j\\x1b[32mall good" in proc.stderr.lower()


def test_the_upstream_issues_state_is_printed_inert_and_recorded_raw(index, tmp_path):
    index.issues[ISSUE] = {"state": f"closed{ESCAPES}", "state_reason": f"completed\n{ESCAPES}"}
    ledger = write_ledger(tmp_path / "ledger.json")
    proc = check_upstream_cli(
        index.url, "--github-api-url", index.url, "--upstream-issue", "pytorch/pytorch#1", ledger=ledger
    )
    assert "\x1b" not in proc.stderr + proc.stdout and "\x9b" not in proc.stderr + proc.stdout
    said = " ".join(line.strip() for line in proc.stderr.splitlines())  # progress lines wrap at 100 columns
    assert (
        "pytorch/pytorch#1: closed\\x1b[2J\\x1b[32mall good\\x1b[8m hidden\\x9b31m "
        "(completed\\x0a\\x1b[2J\\x1b[32mall good\\x1b[8m hidden\\x9b31m)"
    ) in said
    recorded = json.loads(ledger.read_text())["upstream_issues"]["pytorch/pytorch#1"]
    assert recorded["state"] == f"closed{ESCAPES}"  # the ledger keeps what GitHub said
