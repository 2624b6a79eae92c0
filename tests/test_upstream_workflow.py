"""The daily upstream-check workflow, run as its YAML says: the check's own command against loopback
indexes, and the rolling pull request against a local bare repository with a stub ``gh``."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import ROOT, run
from index_server import BUGGY, build_wheel, shape
from repro.catalogue import BUGS
from repro.ledger import ORIGINAL
from tracker.rolling_pr import BRANCH, without_timestamps

WORKFLOW = ROOT / ".github" / "workflows" / "upstream-check.yml"
LEDGER = ROOT / "repro" / "ledger.json"
BEFORE_THE_API = ["1.0.0", "1.0.1", "1.1.0", "1.2.0", "1.3.0", "1.3.1", "1.4.0", "1.5.0", "1.5.1", "1.6.0",
                  "1.7.0", "1.7.1"]  # PyPI's torch releases before register_full_backward_hook (1.8.0)
TAG = "cp311-cp311-manylinux_2_28_x86_64"


def workflow_command(program: str) -> list[str]:
    """The workflow's command line that runs ``program`` (without the shell's redirection)."""
    line = next(line for line in WORKFLOW.read_text().splitlines() if f"python -m {program} " in line)
    command = line[line.index(f"python -m {program} "):].split(">")[0]
    return shlex.split(command)[1:]  # without "python": the tests run their own interpreter


def test_the_daily_check_over_every_release_with_the_committed_ledger_exits_0(index, tmp_path):
    """The first run with the committed ledger: the releases before 1.8 are new to it, lack the API,
    and come out not-applicable, with no install and no status change (the workflow's first run cried
    wolf before)."""
    old_module = "class Module:\n    def register_forward_hook(self, hook):\n        return hook\n"
    ledger_keys = list(json.loads(LEDGER.read_text())["releases"])
    for version in BEFORE_THE_API:  # the oldest wheels lack the jit files too
        sources = shape(**{"torch/nn/modules/module.py": old_module,
                           **({"torch/jit/_script.py": "", "torch/jit/_recursive.py": ""} if version < "1.2" else {})})
        index.wheels[f"torch-{version}-{TAG}.whl"] = build_wheel(sources, padding=1024)
    for version in ledger_keys:
        index.wheels[f"torch-{version}-{TAG}.whl"] = build_wheel(BUGGY, padding=1024)
    assert len(BEFORE_THE_API) + len(ledger_keys) == 52  # what the live index lists today
    command = workflow_command("tracker.check_upstream")
    for option in ("--install-index-url", "--install-extra-index-url"):  # both indexes on loopback
        command[command.index(option) + 1] = f"{index.url}/simple/"
    ledger = tmp_path / "ledger.json"
    ledger.write_bytes(LEDGER.read_bytes())
    proc = run([*command, "--index-url", index.url], ledger=ledger)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report, after = json.loads(proc.stdout), json.loads(ledger.read_text())
    assert report["changes"] == [] and report["errors"] == []
    assert sorted(r["version"] for r in report["releases"]) == sorted(BEFORE_THE_API)
    for version in BEFORE_THE_API:
        bugs = after["releases"][version]["bugs"]
        assert {bug_id: b["static"]["verdict"] for bug_id, b in bugs.items()} == dict.fromkeys(BUGS, "not-applicable")
        assert not any("dynamic" in b for b in bugs.values())  # never confirmed: nothing was installed
        assert "register_full_backward_hook not found" in " ".join(bugs[ORIGINAL]["static"]["evidence"])
    assert not [hit for hit in index.hits if hit.startswith("/simple/")]  # pip was never asked for anything
    assert {v: after["releases"][v] for v in ledger_keys} == json.loads(LEDGER.read_text())["releases"]


# --- the rolling pull request -------------------------------------------------------------------

STUB_GH = '''\
import json, os, sys
with open(os.environ["STUB_GH_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:3] == ["pr", "list"]:
    print(os.environ.get("STUB_GH_OPEN", "[]"))
'''


@dataclass
class Repo:
    """A clone of a bare repository (``remote``) whose main branch holds the committed ledger, and a stub gh
    that logs its calls and lists ``STUB_GH_OPEN`` as the open pull requests."""

    path: Path
    remote: Path
    gh: Path
    log: Path

    def git(self, *args: str, where: Path | None = None) -> str:
        return subprocess.run(["git", *args], cwd=where or self.path, check=True, capture_output=True,
                              text=True).stdout


@pytest.fixture
def repo(tmp_path):
    made = Repo(tmp_path / "clone", tmp_path / "remote.git", tmp_path / "gh", tmp_path / "gh.log")
    made.git("init", "--quiet", "--bare", "--initial-branch=main", str(made.remote), where=tmp_path)
    made.git("clone", "--quiet", str(made.remote), str(made.path), where=tmp_path)
    (made.path / "repro").mkdir()
    (made.path / "repro" / "ledger.json").write_bytes(LEDGER.read_bytes())
    made.git("add", ".")
    made.git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "ledger")
    made.git("push", "--quiet", "origin", "main")
    made.gh.write_text(f"#!{sys.executable}\n{STUB_GH}")
    made.gh.chmod(0o755)
    return made


def rolling_pr(repo: Repo, report: dict, open_pr: str = "[]") -> subprocess.CompletedProcess:
    (repo.path.parent / "report.json").write_text(json.dumps(report))
    command = workflow_command("tracker.rolling_pr")
    command[command.index("--base") + 1] = "main"  # the workflow passes "${GITHUB_REF_NAME}"
    command[command.index("--report") + 1] = str(repo.path.parent / "report.json")
    return run([*command, "--gh", str(repo.gh)], cwd=repo.path, env={"STUB_GH_LOG": str(repo.log), "STUB_GH_OPEN": open_pr})


def edit_ledger(repo: Repo, change) -> None:
    path = repo.path / "repro" / "ledger.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n")


def gh_calls(repo: Repo) -> list[list[str]]:
    return [json.loads(line) for line in repo.log.read_text().splitlines()] if repo.log.exists() else []


def new_release(version: str):
    def change(data: dict) -> None:
        data["releases"][version] = {"checked_at": "2026-12-03T05:17:00+00:00", "yanked": False,
                                     "bugs": {ORIGINAL: {"static": {"verdict": "present", "evidence": []}}}}
    return change


def test_one_branch_rebuilt_from_main_and_one_pull_request_edited_in_place(repo):
    edit_ledger(repo, new_release("2.16.0"))
    first = rolling_pr(repo, {"releases": [{"version": "2.16.0", "bugs": {}}], "changes": []})
    assert first.returncode == 0, first.stderr
    assert gh_calls(repo)[-1][:2] == ["pr", "create"] and "--head" in gh_calls(repo)[-1]
    repo.git("checkout", "--quiet", "--force", "main")  # the next day's fresh checkout of main
    edit_ledger(repo, new_release("2.16.1"))
    second = rolling_pr(repo, {"releases": [{"version": "2.16.1", "bugs": {}}],
                               "changes": [f"{ORIGINAL}: 2.16.1: present -> fixed"]}, open_pr='[{"number": 7}]')
    assert second.returncode == 0, second.stderr
    edit = gh_calls(repo)[-1]
    assert edit[:3] == ["pr", "edit", "7"] and f"{ORIGINAL}: 2.16.1: present -> fixed" in edit[edit.index("--title") + 1]
    assert [call[:2] for call in gh_calls(repo)].count(["pr", "create"]) == 1  # never a second pull request
    history = repo.git("log", "--format=%s", BRANCH, where=repo.remote).splitlines()
    assert len(history) == 2 and history[1] == "ledger"  # one commit on top of main, force-pushed
    pushed = json.loads(repo.git("show", f"{BRANCH}:repro/ledger.json", where=repo.remote))
    assert pushed == json.loads((repo.path / "repro" / "ledger.json").read_text())  # main + today's run
    assert "2.16.1" in pushed["releases"] and "2.16.0" not in pushed["releases"]  # yesterday's: re-checked


def test_timestamps_alone_propose_nothing(repo):
    def restamp(data: dict) -> None:
        for entry in data["releases"].values():
            entry["checked_at"] = "2026-12-03T05:17:00+00:00"

    edit_ledger(repo, restamp)
    proc = rolling_pr(repo, {"releases": [], "changes": []})
    assert proc.returncode == 0 and "nothing to propose" in proc.stdout
    assert gh_calls(repo) == [] and BRANCH not in repo.git("branch", "--list", where=repo.remote)


def test_a_failing_gh_is_one_line_exit_1(repo):
    edit_ledger(repo, new_release("2.16.0"))
    repo.gh.write_text("#!/bin/sh\necho 'gh: authentication required' >&2\nexit 4\n")
    proc = rolling_pr(repo, {"releases": [], "changes": []})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [f"rolling_pr: error: {repo.gh} pr list: gh: authentication required"]


def test_ledger_timestamps_are_all_that_is_ignored():
    ledger = json.loads(LEDGER.read_text())
    stripped = without_timestamps(ledger)
    assert "checked_at" not in json.dumps(stripped) and set(stripped["releases"]) == set(ledger["releases"])
    assert re.search(r'"checked_at"', LEDGER.read_text())  # the committed ledger has stamps to strip
