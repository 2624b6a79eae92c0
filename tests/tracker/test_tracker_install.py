"""Installs for --confirm/--install/--versions (issue 8, item 4): what the throwaway environments are given.

The torch wheels served here are spies: importing one (the reproducer does) records the environment it
was given and prints a chosen report. pip runs against loopback indexes and find-links folders only.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from index_server import IndexServer, build_pure_wheel
from tracker_helpers import check, packaging_wheel, reproducer_report, spy_torch

from helpers import A_BUG, flag
from repro import ledger as ledger_io
from repro.requirements import EXPLORING
from tracker.confirm import INSTALL_ENV, RUN_ENV, Dynamic, ReportError, allowed_env, read_report, read_support

TOKEN = "s3cr3t-token"


@pytest.fixture
def pip_config(tmp_path, monkeypatch):
    """pip configuration naming other sources than the index: find-links from a configuration file
    (torch 9.9.6) and an extra index from ``PIP_EXTRA_INDEX_URL`` (torch 9.9.7)."""
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)  # this machine's own would override the file's
    links = tmp_path / "links"
    links.mkdir()
    name, data = spy_torch("9.9.6", reproducer_report("from the find-links of the pip configuration file"))
    (links / name).write_bytes(data)
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\nfind-links = {links}\n")
    rogue = IndexServer()
    rogue.url = rogue.start()
    name, data = spy_torch("9.9.7", reproducer_report("from the extra index of PIP_EXTRA_INDEX_URL"))
    rogue.wheels[name] = data
    yield {"PIP_CONFIG_FILE": str(config), "PIP_EXTRA_INDEX_URL": f"{rogue.url}/simple/"}
    rogue.stop()


def dynamic(report: dict) -> dict[str, Any]:
    return {r["version"]: flag(r).get("dynamic") for r in report["releases"]}


@pytest.mark.slow
def test_installs_get_an_allow_listed_environment_and_only_the_index(index, tmp_path, pip_config):
    env_file = tmp_path / "seen-env.json"
    for name, data in (
        packaging_wheel(),
        spy_torch("9.9.4", reproducer_report("crafted", "fixed"), env_file),
        spy_torch("9.9.3", {"outcome": "pwned", "conclusion": "x"}),
    ):
        index.wheels[name] = data
    code, result, ledger, stderr = check(
        index,
        tmp_path,
        "--versions",
        "9.9.3,9.9.4,9.9.6,9.9.7",
        "--install-index-url",
        f"{index.url}/simple/",
        env={
            "GITHUB_TOKEN": TOKEN,
            "AWS_SECRET_ACCESS_KEY": TOKEN,
            "http_proxy": "",
            "LC_ALL": "C.UTF-8",
            **pip_config,
        },
    )
    seen = json.loads(env_file.read_text())
    assert TOKEN not in json.dumps(seen) and set(seen) <= {
        *RUN_ENV,
        "PYTHONPATH",
        "LC_ALL",
        "LC_CTYPE",
        "TORCH_DEVICE_BACKEND_AUTOLOAD",
    }  # set by repro
    assert seen["LC_ALL"] == "C.UTF-8" and "PATH" in seen
    got = dynamic(result)
    assert got["9.9.4"] == {**got["9.9.4"], "verdict": "fixed", "detail": "crafted"}
    for version in ("9.9.6", "9.9.7"):  # the index lacks them: pip's configuration is not consulted
        assert got[version] is None and f"installing torch {version} failed" in ledger["releases"][version]["error"]
    assert got["9.9.3"] is None and "dynamic" not in flag(ledger["releases"]["9.9.3"])
    assert result["errors"] == [f"{v}: {ledger['releases'][v]['error']}" for v in ("9.9.3", "9.9.6", "9.9.7")]
    assert "not a report with an outcome (present, fixed, different, cannot-test)" in result["errors"][0]
    assert code == 3 and ledger["bugs"][A_BUG]["fixed_in"] == "9.9.4" and "Traceback" not in stderr


@pytest.mark.slow
def test_use_pip_config_honours_pip_configuration(index, tmp_path, pip_config):
    name, data = packaging_wheel()
    index.wheels[name] = data
    code, result, _, stderr = check(
        index,
        tmp_path,
        "--versions",
        "9.9.6,9.9.7",
        "--use-pip-config",
        "--install-index-url",
        f"{index.url}/simple/",
        env=pip_config,
    )
    assert code == 0, stderr
    assert {v: d["detail"] for v, d in dynamic(result).items()} == {
        "9.9.6": "from the find-links of the pip configuration file",
        "9.9.7": "from the extra index of PIP_EXTRA_INDEX_URL",
    }


@pytest.mark.slow
def test_torch_comes_only_from_the_install_index_and_dependencies_also_from_the_extra_one(index, tmp_path):
    extra = IndexServer()
    extra.url = extra.start()
    try:
        name, data = spy_torch("9.9.5", reproducer_report("torch from the install index"))
        index.wheels[name] = data
        for name, data in (
            packaging_wheel(),  # a dependency only the extra index has
            spy_torch("9.9.5", reproducer_report("torch from the extra index"), tag="cp311-none-any"),
        ):
            extra.wheels[name] = data
        code, result, _, stderr = check(
            index,
            tmp_path,
            "--versions",
            "9.9.5",
            "--install-index-url",
            f"{index.url}/simple/",
            "--install-extra-index-url",
            f"{extra.url}/simple/",
        )
    finally:
        extra.stop()
    assert code == 0, stderr
    assert dynamic(result)["9.9.5"]["detail"] == "torch from the install index"


@pytest.mark.parametrize(
    "stdout",
    [
        "{}",
        "[1]",
        '{"outcome": "pwned", "conclusion": "x"}',
        '{"outcome": "fixed"}',
        '{"outcome": "fixed", "conclusion": 1}',
        "[" * 100_000 + "]" * 100_000,
        '{"outcome": "fixed", "conclusion": "x"}',
        '{"outcome": "fixed", "conclusion": "x", "bugs": [{"id": 1, "status": "fixed", "detail": "x"}]}',
    ],
    ids=[
        "empty-object",
        "list",
        "unknown-outcome",
        "no-conclusion",
        "conclusion-number",
        "deep",
        "no-bugs",
        "bug-id-number",
    ],
)
def test_a_report_that_is_not_one_is_an_error(stdout):
    with pytest.raises(ReportError, match="not a report with an outcome"):
        read_report(stdout, "")


def test_reports_read():
    assert read_report(json.dumps({**reproducer_report("ok", "fixed"), "more": 1}), "") == {
        A_BUG: Dynamic("fixed", "ok")
    }
    with pytest.raises(ReportError, match="^the reproducer printed no report: Segmentation fault$"):
        read_report("", "Segmentation fault\n")  # a crash measured nothing: an error, never cannot-test
    with pytest.raises(ReportError, match="^the reproducer printed no report: no output; killed by SIGSEGV$"):
        read_report("", "", -11)  # killed without a word: how it ended is the only clue
    with pytest.raises(ReportError, match="^the reproducer printed no report: no output; exit code 3$"):
        read_report("", "", 3)


def test_a_support_column_with_a_cell_over_the_cap_is_kept_with_that_cell_cut():
    """torch 1.13.1's register_full_backward_hook cell names 3,900 characters of conditions: the column
    was dropped whole, so the support page left 1.13.1 out."""
    rows = [
        {"api": "register_full_backward_hook", "cell": "works (on flat) " * 250, "codes": ["ok"], "left_out": 0},
        {"api": "train", "cell": "works", "codes": ["ok"]},
    ]
    stdout = json.dumps(
        {
            "support": rows,
            "device": "cpu",
            "python_version": "3.11.7",
            "platform": "linux-x86_64",
            "scenario_table": "abc",
        }
    )
    column = read_support(stdout)["cpu"]
    cell = column["rows"]["register_full_backward_hook"]["cell"]
    assert (
        len(cell) == ledger_io.MAX_CELL and cell.endswith(ledger_io.CUT) and column["rows"]["train"]["cell"] == "works"
    )


def test_allowed_env(monkeypatch):
    for key in (
        "GITHUB_TOKEN",
        "PIP_FIND_LINKS",
        "PIP_INDEX_URL",
        "UV_INDEX_URL",
        "https_proxy",
        "HTTPS_PROXY",
        "PIP_CERT",
        "LC_ALL",
        "TMPDIR",
    ):
        monkeypatch.setenv(key, "x")
    install, run = allowed_env(INSTALL_ENV), allowed_env(RUN_ENV)
    assert {"https_proxy", "HTTPS_PROXY", "PIP_CERT", "LC_ALL", "TMPDIR"} <= set(install)
    assert not {"GITHUB_TOKEN", "PIP_FIND_LINKS", "PIP_INDEX_URL", "UV_INDEX_URL"} & set(install)
    assert {"LC_ALL", "TMPDIR"} <= set(run) and not {"https_proxy", "PIP_CERT", "GITHUB_TOKEN"} & set(run)


EXPLORATION = {  # what --explore --json and --explore --workarounds --json print, in one report
    "seed": 0,
    "budget_s": 7.0,
    "cases": 12,
    "replayed": 2,
    "seconds": 4.5,
    "apis_covered": {"forward": 12, "copy.copy": 3},
    "departures": [
        {"explanation": "a catalogued bug", "cause": A_BUG, "kind": "loud", "step": "s", "detail": "d"},
        {
            "explanation": "unexplained",
            "cause": None,
            "kind": "silent",
            "step": "m = copy.copy(m)",
            "detail": "children of another class",
            "script": "import torch",
        },
    ],
    "explorations": [
        {"id": A_BUG, "cases": 5, "workaround": {"name": "w", "verdict": "holds", "space": "5 generated models"}},
        {"id": "Not An Id", "cases": 5, "workaround": {"name": "w", "verdict": "holds", "space": "5"}},
    ],
}


@pytest.mark.slow
def test_the_explorer_runs_on_each_release_confirmed_and_the_ledger_keeps_what_it_found(index, tmp_path):
    """--explore 7: hypothesis is installed next to torch, the explorer runs with the budget, seed 0
    and the database folder, once searching and once with the workarounds; the release's record and
    the bug's workaround verdict on generated models are in the ledger (an entry with a bad id is not)."""
    argv_file, database = tmp_path / "argv", tmp_path / "db"
    report = {**reproducer_report("crafted"), **EXPLORATION}
    for name, data in (
        packaging_wheel(),
        build_pure_wheel("hypothesis", EXPLORING[0].split("==")[1], {"hypothesis/__init__.py": b""}),
        spy_torch("9.9.4", report, argv_file=argv_file),
    ):
        index.wheels[name] = data
    code, result, ledger, stderr = check(
        index, tmp_path, "--versions", "9.9.4", "--install-index-url", f"{index.url}/simple/",
        "--explore", "7", "--explore-database", str(database),
    )  # fmt: skip
    assert code == 0 and result["errors"] == [], stderr
    runs = [json.loads(line) for line in argv_file.read_text().splitlines()]
    explore = ["--explore", "--budget", "7", "--seed", "0", "--database", str(database.resolve())]
    assert runs[2:] == [
        ["--json", *explore, "--device", "cpu"],
        ["--json", "--explore", "--workarounds", *explore[1:], "--device", "cpu"],
    ]
    release = ledger["releases"]["9.9.4"]
    record = release["explore"]["cpu"]
    assert {k: v for k, v in record.items() if k != "checked_at"} == {
        "seed": 0,
        "budget_s": 7.0,
        "cases": 12,
        "replayed": 2,
        "seconds": 4.5,
        "departures": {"a catalogued bug": 1, "unexplained": 1},
        "bugs": [A_BUG],
        "unexplained": ["silent at m = copy.copy(m): children of another class"],
        "apis": {"forward": 12, "copy.copy": 3},
    }
    tried = release["bugs"][A_BUG]["explored"]
    assert {k: v for k, v in tried.items() if k != "checked_at"} == {
        "workaround": "w",
        "verdict": "holds",
        "space": "5 generated models",
        "cases": 5,
    }
    assert set(release["bugs"]) == {A_BUG}


@pytest.mark.slow
def test_an_explorer_that_gives_no_report_is_an_error_and_the_verdicts_stand(index, tmp_path):
    for name, data in (
        packaging_wheel(),
        build_pure_wheel("hypothesis", EXPLORING[0].split("==")[1], {"hypothesis/__init__.py": b""}),
        spy_torch("9.9.4", reproducer_report("crafted")),  # no departures: not an explorer's report
    ):
        index.wheels[name] = data
    code, result, ledger, stderr = check(
        index, tmp_path, "--versions", "9.9.4", "--install-index-url", f"{index.url}/simple/", "--explore", "7"
    )
    assert code == 1 and result["errors"] == [
        "9.9.4: the explorer's JSON is not a report of departures: "
        + (repr(json.dumps(reproducer_report("crafted"))[:80]))
    ]
    release = ledger["releases"]["9.9.4"]
    assert flag(release)["dynamic"]["detail"] == "crafted" and "explore" not in release and "error" not in release


def test_explore_options_of_the_tracker_are_usage_errors(index, tmp_path):
    for argv, said in (
        (["--explore", "60"], "--explore runs where a release is installed"),
        (["--install", "--explore-database", "db"], "--explore-database is for --explore"),
        (["--install", "--explore", "0"], "not a positive number of seconds"),
    ):
        code, _, _, stderr = check(index, tmp_path, *argv)
        assert code == 2 and said in stderr, stderr
