"""A device's support table joins the ledger (issue 27, item 8): validated and bounded, its text outside
text, refused in one sentence when its torch, shape or device does not match."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from markdown_render import unseen

from repro.ledger import load
from tracker import device_report


def _row(api: str, codes: list[str], cell: str) -> dict:
    return {"api": api, "cell": cell, "codes": codes, "left_out": 0, "outcomes": []}


NPU_REPORT: dict[str, Any] = {
    "schema": 1,
    "torch_version": "2.13.0+cpu",  # torch_npu pairs with the CPU build of its torch
    "python_version": "3.11.7",
    "platform": "linux-aarch64",
    "device": "npu:0",
    "codes": ["ok", "BUG", "design", "undocumented", "unexplained", "absent", "not-run", "eager-fails"],
    "scenario_table": "27de8f846655",
    "rows": [
        _row("register_full_backward_hook", ["full-backward-hook-flag"], "raises: full-backward-hook-flag"),
        _row("npu", ["ok"], "works"),
        _row("to", ["ok"], "works\x1b[2J <img src=x> `evil`\u202e"),
    ],
}


@pytest.fixture
def ledger(tmp_path):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps({"schema": 3, "bugs": {}, "releases": {"2.13.0": {"bugs": {}, "support": {}}}}))
    return path


def merge(tmp_path, ledger, report, *args: str, capsys) -> tuple[int, str, str]:
    path = tmp_path / "report.json"
    path.write_text(report if isinstance(report, str) else json.dumps(report))
    code = device_report.main([str(path), "--ledger", str(ledger), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_device_report_becomes_that_devices_column(tmp_path, ledger, capsys):
    code, out, err = merge(tmp_path, ledger, NPU_REPORT, "--device", "npu", "--torch", "2.13", capsys=capsys)
    assert code == 0 and out.startswith("merged 3 cells of torch 2.13.0 on npu into "), err
    column = load(ledger)["releases"]["2.13.0"]["support"]["npu"]  # beside the CPU column, same shape
    assert column["torch"] == "2.13.0+cpu" and column["rows"]["npu"] == {
        "codes": ["ok"],
        "cell": "works",
        "left_out": 0,
    }
    assert column["python"] == "3.11.7" and column["platform"] == "linux-aarch64" and column["table"] == "27de8f846655"
    assert column["rows"]["to"]["cell"] == NPU_REPORT["rows"][2]["cell"]  # stored raw: rendering sanitises
    assert unseen(out) == []


BAD = {
    "other-device": (NPU_REPORT, ["--device", "cuda", "--torch", "2.13.0"], "was measured on 'npu:0', not on cuda"),
    "other-torch": (NPU_REPORT, ["--device", "npu", "--torch", "2.12.0"], "is of torch '2.13.0+cpu', not of 2.12.0"),
    "other-schema": (
        {**NPU_REPORT, "schema": 3},
        ["--device", "npu", "--torch", "2.13.0"],
        "has schema 3; this version reads 1",
    ),
    "other-shape": (
        {k: v for k, v in NPU_REPORT.items() if k != "codes"},
        ["--device", "npu", "--torch", "2.13.0"],
        "not the support table's JSON this version reads",
    ),
    "bad-row": (
        {**NPU_REPORT, "rows": [_row("x\ny", ["ok"], "works")]},
        ["--device", "npu", "--torch", "2.13.0"],
        "a row that is not an API name",
    ),
    "not-our-code": (
        {**NPU_REPORT, "rows": [_row("to", ["Works!"], "works")]},
        ["--device", "npu", "--torch", "2.13.0"],
        "with support codes",
    ),
    "huge-cell": (
        {**NPU_REPORT, "rows": [_row("to", ["ok"], "w" * 5000)]},
        ["--device", "npu", "--torch", "2.13.0"],
        "a cell of at most 2000 characters",
    ),
    "huge-number": ('{"rows": 1' + "0" * 400 + "}", ["--device", "npu", "--torch", "2.13.0"], "401 digits"),
    "not-json": ("{", ["--device", "npu", "--torch", "2.13.0"], "is not valid JSON"),
    "unknown-release": (
        {**NPU_REPORT, "torch_version": "2.14.0"},
        ["--device", "npu", "--torch", "2.14.0"],
        "has no release 2.14.0",
    ),
    "hostile-device": (
        {**NPU_REPORT, "device": "npu\x1b[2J\u202e"},
        ["--device", "cuda", "--torch", "2.13.0"],
        "\\x1b[2J\\u202e",
    ),
}


@pytest.mark.parametrize("case", BAD, ids=BAD.keys())
def test_a_report_that_does_not_match_is_refused_in_one_sentence(tmp_path, ledger, capsys, case):
    report, args, says = BAD[case]
    before = ledger.read_bytes()
    code, out, err = merge(tmp_path, ledger, copy.deepcopy(report), *args, capsys=capsys)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and lines[0].startswith("device_report: error: "), err
    assert says in lines[0] and unseen(err) == [], lines[0]
    assert ledger.read_bytes() == before


def test_a_dry_run_validates_and_writes_nothing(tmp_path, ledger, capsys):
    before = ledger.read_bytes()
    code, out, _ = merge(
        tmp_path, ledger, NPU_REPORT, "--device", "npu", "--torch", "2.13.0", "--dry-run", capsys=capsys
    )
    assert code == 0 and out.startswith("would merge 3 cells") and ledger.read_bytes() == before


def test_a_ledger_with_a_malformed_device_column_is_refused(tmp_path):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps({"schema": 3, "bugs": {}, "releases": {"2.13.0": {"support": {"npu": {"rows": [1]}}}}}))
    from repro.ledger import LedgerError

    with pytest.raises(LedgerError, match="a support table in 2.13.0 that is not one column per device"):
        load(path)


# --- issue 43: a dry run decides as the real run does; codes from the vocabulary; --replace


@pytest.mark.parametrize(
    ("ledger_text", "torch", "says"),
    [
        (None, "2.13.0", "does not exist"),
        ('{"schema": 3, "bugs": {}, "releases": {}}', "2.13.0", "has no release 2.13.0"),
    ],
    ids=["no-ledger", "release-missing"],
)
def test_a_dry_run_refuses_what_the_real_run_refuses(tmp_path, capsys, ledger_text, torch, says):
    """Before: "would merge 3 cells ...", exit 0, where the real run refused."""
    path = tmp_path / "ledger.json"
    if ledger_text is not None:
        path.write_text(ledger_text)
    for dry in (["--dry-run"], []):
        code, out, err = merge(tmp_path, path, NPU_REPORT, "--device", "npu", "--torch", torch, *dry, capsys=capsys)
        assert (code, out) == (2, "") and says in err, (dry, err)
    assert ledger_text is None or path.read_text() == ledger_text


def test_a_dry_run_writes_nothing_where_the_real_run_merges(tmp_path, ledger, capsys):
    before = ledger.read_text()
    code, out, _ = merge(
        tmp_path, ledger, NPU_REPORT, "--device", "npu", "--torch", "2.13.0", "--dry-run", capsys=capsys
    )
    assert code == 0 and out.startswith("would merge 3 cells") and ledger.read_text() == before


@pytest.mark.parametrize("code", ["fixed", "works-everywhere", "no-such-bug"])
def test_a_code_outside_the_vocabulary_and_the_catalogue_is_refused(tmp_path, ledger, capsys, code):
    report = copy.deepcopy(NPU_REPORT)
    report["rows"][1]["codes"] = ["ok", code]
    before = ledger.read_text()
    result, out, err = merge(tmp_path, ledger, report, "--device", "npu", "--torch", "2.13.0", capsys=capsys)
    assert (result, out) == (2, "") and "neither a support table's word nor a bug id" in err and code in err
    assert ledger.read_text() == before


def test_a_bug_id_the_ledger_knows_is_a_code_even_when_the_catalogue_dropped_it(tmp_path, capsys):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps({"schema": 3, "bugs": {"a-retired-bug": {}}, "releases": {"2.13.0": {"bugs": {}}}}))
    report = copy.deepcopy(NPU_REPORT)
    report["rows"][1]["codes"] = ["a-retired-bug"]
    code, _, err = merge(tmp_path, path, report, "--device", "npu", "--torch", "2.13.0", capsys=capsys)
    assert code == 0, err


def test_a_second_report_for_a_device_replaces_its_column_only_when_asked(tmp_path, ledger, capsys):
    args = ["--device", "npu", "--torch", "2.13.0"]
    assert merge(tmp_path, ledger, NPU_REPORT, *args, capsys=capsys)[0] == 0
    first = load(ledger)["releases"]["2.13.0"]["support"]["npu"]
    second = copy.deepcopy(NPU_REPORT)
    second["rows"][1]["cell"] = "works, measured again"
    code, out, err = merge(tmp_path, ledger, second, *args, capsys=capsys)
    assert (code, out) == (2, "") and "already holds a npu column of torch 2.13.0" in err and "--replace" in err
    assert load(ledger)["releases"]["2.13.0"]["support"]["npu"] == first
    code, out, _ = merge(tmp_path, ledger, second, *args, "--replace", capsys=capsys)
    assert code == 0 and f"; replaced the npu column of torch 2.13.0 merged {first['merged_at']}" in out
    assert load(ledger)["releases"]["2.13.0"]["support"]["npu"]["rows"]["npu"]["cell"] == "works, measured again"
