"""Versions from outside are parsed in one place (``repro.versions``): a number past Python's 4,300-digit
limit, for which ``packaging`` raises a plain ``ValueError``, is one sentence or skipped in every reader,
never a traceback; the limit itself is never raised."""

from __future__ import annotations

import json
import sys

import pytest
from packaging.version import InvalidVersion

from repro import ledger as ledger_io
from repro import versions
from tools import release
from tracker import device_report

HUGE = "1" + "0" * 5000  # packaging: ValueError "Exceeds the limit (4300 digits) for integer string conversion"


@pytest.mark.parametrize("text", [HUGE, f"2.{HUGE}.0", "2.13.0" + "+cpu" * 40, "not a version", 2.13, None])
def test_anything_but_a_version_is_invalid_version(text):
    with pytest.raises(InvalidVersion, match="not a version"):
        versions.parse(text)
    assert versions.parsed_or_none(text) is None
    assert sys.get_int_max_str_digits() in (0, 4300)  # never raised to let one through


def test_a_version_is_parsed_as_packaging_parses_it():
    assert str(versions.parse("2.16.0.dev20261201+cu126")) == "2.16.0.dev20261201+cu126"


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"schema": 2, "bugs": {}, "releases": {HUGE: {"bugs": {}}}}, "a release key '100000"),
        ({"schema": 2, "bugs": {"a-bug": {"fixed_in": HUGE}}, "releases": {}}, "an invalid fixed_in '100000"),
    ],
    ids=["release-key", "fixed-in"],
)
def test_a_ledger_with_a_huge_version_is_one_sentence(tmp_path, data, says):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ledger_io.LedgerError, match=says) as caught:
        ledger_io.load(path)
    assert len(str(caught.value)) < 300


def one_sentence(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


def test_a_device_reports_huge_torch_version_is_refused(tmp_path, capsys):
    ledger = tmp_path / "ledger.json"
    ledger.write_text(json.dumps({"schema": 3, "bugs": {}, "releases": {"2.13.0": {"bugs": {}}}}))
    report = tmp_path / "report.json"
    fields = {"schema": 1, "torch_version": HUGE, "python_version": "3.11", "platform": "p", "device": "npu"}
    report.write_text(json.dumps({**fields, "codes": [], "scenario_table": "t", "rows": []}))
    argv = [str(report), "--ledger", str(ledger), "--device", "npu", "--torch", "2.13.0"]
    assert device_report.main(argv) == 2
    assert "is of torch '100000" in one_sentence(capsys)
    with pytest.raises(SystemExit) as usage:
        device_report.main([str(report), "--device", "npu", "--torch", HUGE])
    err = capsys.readouterr().err
    assert usage.value.code == 2 and "Traceback" not in err and "argument --torch: not a version" in err


def test_tools_release_refuses_huge_versions_in_one_sentence(tmp_path, capsys):
    published = tmp_path / "pypi.json"
    published.write_text(json.dumps({"releases": {HUGE: []}}))
    with pytest.raises(release.ReleaseError, match="which is not a version"):
        release.published_versions(published)
    assert release.tag_versions([f"v{HUGE}", "v0.1.0"]) == [versions.parse("0.1.0")]
    with pytest.raises(SystemExit) as usage:
        release.main(["notes", "--version", HUGE])
    assert usage.value.code == 2 and "not a PEP 440 version" in capsys.readouterr().err
    with pytest.raises(release.ReleaseError, match="is not a PEP 440 version"):
        release.code_version(f'[tool.scriptmodule-hook-repro]\ncode-version = "{HUGE}"\n')


def test_ordered_sorts_releases_as_versions_and_puts_non_versions_first():
    from repro.versions import ordered

    assert ordered(["2.10.0", "2.9.1", "not a version", "1.13.1", "2.10.0rc1"]) == [
        "not a version",
        "1.13.1",
        "2.9.1",
        "2.10.0rc1",
        "2.10.0",
    ]
