"""Nightlies (issue 11, item 5): ``--pre`` against PyTorch's nightly index layout (no JSON API, a PEP 503
page at ``<URL>/torch/``), read through ``--index-kind``, and one nightly per base version in the ledger."""

from __future__ import annotations

import pytest
from hostile_server import answer
from index_server import BUGGY, IndexServer, build_wheel
from packaging.version import Version
from tracker_helpers import check, verdicts, wheel_name

from helpers import flag
from tracker.check_upstream import parse_args
from tracker.index import Release, discover
from tracker.remote import FetchError, Traffic, make_session
from tracker.sweep import Options, newest_nightlies, select, superseded_nightlies

PREFIX = "/whl/nightly/cpu"
API, PAGE = f"{PREFIX}/pypi/torch/json", f"{PREFIX}/torch/"


@pytest.fixture
def nightly(index):
    """PyTorch's nightly layout on loopback, listing two nightlies of 2.16.0 and a stable release."""
    index.nightly = PREFIX
    for version in ("2.15.0", "2.16.0.dev20261130+cpu", "2.16.0.dev20261201+cpu"):
        index.wheels[wheel_name(version)] = build_wheel(BUGGY, padding=1024)
    return index


def wheel_hits(index: IndexServer, version: str) -> int:
    return sum(n for path, n in index.hits.items() if path.startswith("/files/") and version in path)


@pytest.mark.parametrize("kind", ["auto", "simple"])
def test_pre_reads_the_nightly_page_and_checks_only_the_newest_nightly(nightly, tmp_path, kind):
    code, report, ledger, stderr = check(nightly, tmp_path, "--pre", "--index-kind", kind, url=f"{nightly.url}{PREFIX}")
    assert code == 0, stderr
    assert verdicts(report) == {"2.15.0": "present", "2.16.0.dev20261201": "present"}
    assert set(ledger["releases"]) == {"2.15.0", "2.16.0.dev20261201"}
    assert ledger["releases"]["2.16.0.dev20261201"]["probe"]["wheel"] == wheel_name("2.16.0.dev20261201+cpu")
    assert wheel_hits(nightly, "dev20261130") == 0  # the older nightly's wheel is never read
    assert nightly.hits[PAGE] == 1 and nightly.hits[API] == (1 if kind == "auto" else 0)


def test_index_kind_json_fails_in_one_sentence_without_trying_the_page(nightly, tmp_path):
    code, report, ledger, stderr = check(
        nightly, tmp_path, "--pre", "--index-kind", "json", url=f"{nightly.url}{PREFIX}"
    )
    assert code == 1 and report is None and ledger["releases"] == {}
    assert stderr == f"check_upstream: error: GET {nightly.url}{API} answered HTTP 404\n"
    assert nightly.hits[PAGE] == 0


def test_a_newer_nightly_replaces_the_older_and_leaves_releases_and_rcs_alone(nightly, tmp_path):
    for version in ("2.16.0rc1", "2.17.0.dev20261201+cpu"):
        nightly.wheels[wheel_name(version)] = build_wheel(BUGGY, padding=1024)
    url = f"{nightly.url}{PREFIX}"
    _, _, first, _ = check(nightly, tmp_path, "--pre", url=url)
    assert set(first["releases"]) == {"2.15.0", "2.16.0rc1", "2.16.0.dev20261201", "2.17.0.dev20261201"}

    nightly.wheels[wheel_name("2.16.0.dev20261202+cpu")] = build_wheel(BUGGY, padding=1024)
    code, report, second, stderr = check(nightly, tmp_path, "--pre", url=url)
    assert code == 0, stderr
    assert verdicts(report) == {"2.16.0.dev20261202": "present"}
    assert set(second["releases"]) == {"2.15.0", "2.16.0rc1", "2.16.0.dev20261202", "2.17.0.dev20261201"}
    for untouched in ("2.15.0", "2.16.0rc1", "2.17.0.dev20261201"):
        assert second["releases"][untouched] == first["releases"][untouched]


def test_a_nightly_that_fails_keeps_the_older_one_until_it_is_retried(nightly, tmp_path):
    url = f"{nightly.url}{PREFIX}"
    check(nightly, tmp_path, "--pre", url=url)
    nightly.wheels[wheel_name("2.16.0.dev20261202+cpu")] = build_wheel(BUGGY, padding=1024)
    nightly.faults.ranges = False
    code, _, ledger, _ = check(nightly, tmp_path, "--pre", url=url)
    assert code == 1 and "ignores Range" in ledger["releases"]["2.16.0.dev20261202"]["error"]
    assert flag(ledger["releases"]["2.16.0.dev20261201"])["static"]["verdict"] == "present"
    nightly.faults.ranges = True
    code, report, ledger, _ = check(nightly, tmp_path, "--pre", url=url)
    assert code == 0 and verdicts(report) == {"2.16.0.dev20261202": "present"}
    assert "2.16.0.dev20261201" not in ledger["releases"] and "error" not in ledger["releases"]["2.16.0.dev20261202"]


def test_without_pre_no_nightly_is_checked(nightly, tmp_path):
    code, report, ledger, _ = check(nightly, tmp_path, url=f"{nightly.url}{PREFIX}")
    assert code == 0 and verdicts(report) == {"2.15.0": "present"} and set(ledger["releases"]) == {"2.15.0"}


PAGE_HTML = answer(
    200,
    b'<a href="torch-2.16.0.dev20261201+cpu-cp311-cp311-linux_x86_64.whl">'
    b"torch-2.16.0.dev20261201+cpu-cp311-cp311-linux_x86_64.whl</a>",
    Content_Type="text/html",
)


@pytest.mark.parametrize(
    "no_api",
    [
        answer(404, b"not found"),
        answer(403, b"<Error><Code>AccessDenied</Code></Error>", Content_Type="application/xml"),  # S3's missing key
        answer(200, b"<html>a catch-all page</html>", Content_Type="text/html"),
    ],
    ids=["404", "s3-403", "html-page"],
)
def test_auto_falls_back_on_the_json_apis_answer(server, no_api):
    server.routes["/pypi/torch/json"], server.routes["/torch/"] = no_api, PAGE_HTML
    releases = discover(make_session(), server.url, Traffic())
    assert [str(r.version) for r in releases] == ["2.16.0.dev20261201"]
    assert releases[0].wheels[0].url == f"{server.url}/torch/torch-2.16.0.dev20261201+cpu-cp311-cp311-linux_x86_64.whl"


def test_auto_does_not_fall_back_on_a_failure(server):
    server.routes["/pypi/torch/json"], server.routes["/torch/"] = answer(401, b"who are you"), PAGE_HTML
    with pytest.raises(FetchError, match="answered HTTP 401$"):
        discover(make_session(), server.url, Traffic())
    assert server.hits["/torch/"] == 0


def test_auto_names_both_attempts_when_neither_layout_is_there(server):
    root = f"{server.url}/nothing"
    with pytest.raises(FetchError) as raised:
        discover(make_session(), root, Traffic())
    assert str(raised.value) == (
        f"{root} has neither a JSON API (GET {root}/pypi/torch/json answered HTTP 404) "
        f"nor a simple index page (GET {root}/torch/ answered HTTP 404)"
    )


def test_index_kind_with_versions_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        parse_args(["--versions", "2.13.0", "--index-kind", "simple"])
    assert exited.value.code == 2 and "--index-kind would be ignored" in capsys.readouterr().err


def versions(*texts: str) -> list[Version]:
    return [Version(t) for t in texts]


def test_newest_nightly_per_base_version():
    listed = versions(
        "2.15.0",
        "2.16.0rc1",
        "2.16.0.dev20261130",
        "2.16.0.dev20261201",
        "2.17.0.dev20261101",
        "2.16.0rc1.dev5",
        "2.16.0.post1.dev3",
    )
    assert newest_nightlies(listed) == set(versions("2.16.0.dev20261201", "2.17.0.dev20261101"))


def test_superseded_nightlies_are_older_nightlies_of_the_same_base():
    keys = [
        "2.15.0",
        "2.16.0",
        "2.16.0rc1",
        "2.16.0.dev20261129",
        "2.16.0.dev20261130",
        "2.16.0.dev20261202",
        "2.17.0.dev20261101",
        "2.15.0.dev20260101",
    ]
    assert superseded_nightlies(keys, "2.16.0.dev20261201") == ["2.16.0.dev20261129", "2.16.0.dev20261130"]
    assert superseded_nightlies(keys, "2.16.0") == []  # a release supersedes nothing
    assert superseded_nightlies(keys, "2.16.0rc1") == []


def test_select_skips_a_nightly_older_than_the_ledgers(tmp_path):
    listed = [Release(v, ()) for v in versions("2.16.0.dev20261130", "2.16.0.dev20261201", "2.17.0.dev20261201")]
    options = Options(ledger=tmp_path / "ledger.json", pre=True, recheck=True)
    known: dict[str, dict] = {"2.16.0.dev20261202": {"bugs": {}}}
    assert [str(r.version) for r in select(listed, known, options)] == ["2.17.0.dev20261201"]
    assert [str(r.version) for r in select(listed, {}, options)] == ["2.16.0.dev20261201", "2.17.0.dev20261201"]


@pytest.mark.parametrize("undated", ["2.16.0.dev202612011", "2.16.0.dev99999999", "2.16.0.dev1"])
def test_a_nightly_whose_dev_number_is_not_a_date_is_skipped_and_never_displaces_the_newest(tmp_path, undated):
    listed = [Release(v, ()) for v in versions("2.16.0.dev20261201", undated, "2.16.0.dev20261202")]
    warnings: list[str] = []
    chosen = select(listed, {}, Options(ledger=tmp_path / "ledger.json", pre=True), warnings.append)
    assert [str(r.version) for r in chosen] == ["2.16.0.dev20261202"]
    assert warnings == [f"warning: skipped {undated}: a nightly whose dev number is not a YYYYMMDD date"]
    known: dict[str, dict] = {
        undated: {"bugs": {}}
    }  # recorded by an earlier version of the tracker: still no displacement
    assert [str(r.version) for r in select(listed, known, Options(ledger=tmp_path / "l.json", pre=True))] == [
        "2.16.0.dev20261202"
    ]
    assert superseded_nightlies(["2.16.0.dev20261201"], undated) == []
