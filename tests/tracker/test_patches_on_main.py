"""The weekly check of each bug's upstream patch against pytorch/pytorch main (issue 43, item 17), run as
its workflow's YAML says against a PyTorch-shaped git repository on this machine (served over file://,
as GitHub would serve main), with a stub ``gh`` for the rolling issue."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from markdown_render import live, table_widths, tags

from helpers import A_BUG, ROOT, first_quick, run
from repro.catalogue import BUGS
from tracker.patches_on_main import BEGIN, END, MainCheck, PatchRow, docs_text, summary

WORKFLOW = ROOT / ".github" / "workflows" / "patches-on-main.yml"
UPSTREAM_URL = "https://github.com/pytorch/pytorch.git"
STUB_GH = """\
import json, os, sys
with open(os.environ["STUB_GH_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:3] == ["issue", "list"]:
    print(os.environ.get("STUB_GH_OPEN", "[]"))
if "--body-file" in sys.argv:
    with open(sys.argv[sys.argv.index("--body-file") + 1]) as body:
        text = body.read()
    with open(os.environ["STUB_GH_LOG"] + ".body", "w") as kept:
        kept.write(text)
"""
ONE_BUG = next(iter(BUGS))


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def upstream(checkout: Path) -> Path:
    """pytorch/pytorch main in miniature: the PyTorch-shaped tree, and a file no patch reads, committed."""
    (checkout / "README.md").write_text("PyTorch\n")
    git("config", "uploadpack.allowFilter", "true", cwd=checkout)  # GitHub serves partial clones too
    git("add", ".", cwd=checkout)
    git("-c", "user.name=u", "-c", "user.email=u@example.com", "commit", "--quiet", "-m", "main", cwd=checkout)
    return checkout


@pytest.fixture
def stub_gh(tmp_path: Path) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "gh").write_text(f"#!{sys.executable}\n{STUB_GH}")
    (folder / "gh").chmod(0o755)
    return folder


def steps() -> list[dict]:
    return yaml.safe_load(WORKFLOW.read_text())["jobs"]["check"]["steps"]


def run_workflow(upstream: Path, work: Path, stub_gh: Path, open_issues: list[dict] | None = None) -> dict:
    """Every ``run`` step of the workflow, in order, as Actions runs them (bash -e, this interpreter as
    ``python``, gh stubbed), with main cloned from ``upstream``: what each step left."""
    work.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        "PATH": f"{stub_gh}:{Path(sys.executable).parent}:{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "GITHUB_STEP_SUMMARY": str(work / "summary.md"),
        "GITHUB_OUTPUT": str(work / "output.txt"),
        "STUB_GH_LOG": str(work / "gh.log"),
        "STUB_GH_OPEN": json.dumps(open_issues or []),
    }
    for step in steps():
        if "run" not in step or "pip install" in step["run"]:
            continue
        script = step["run"].replace(UPSTREAM_URL, f"file://{upstream}")
        done = subprocess.run(["bash", "-e", "-c", script], cwd=work, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{step.get('name')}: {done.stderr[-2000:]}"
    calls = [json.loads(line) for line in (work / "gh.log").read_text().splitlines()]
    return {
        "report": json.loads((work / "patches-on-main.json").read_text()),
        "summary": (work / "summary.md").read_text(),
        "output": (work / "output.txt").read_text(),
        "gh": calls,
        "body": (work / "gh.log.body").read_text() if (work / "gh.log.body").exists() else "",
        "tree": sorted(str(p.relative_to(work / "pytorch")) for p in (work / "pytorch").rglob("*") if p.is_file()),
    }


@pytest.mark.slow  # a git repository and the workflow's steps (over a second)
@pytest.mark.needs_bug(A_BUG)  # every patch applies to the installed release's files while the bug is there
def test_the_workflow_checks_every_patch_in_a_sparse_checkout_of_main(upstream, tmp_path, stub_gh):
    commit = git("rev-parse", "HEAD", cwd=upstream).strip()
    done = run_workflow(upstream, tmp_path / "run", stub_gh)
    report = done["report"]
    assert report["commit"] == commit and "code=0" in done["output"]
    assert [(p["bug"], p["applies"]) for p in report["patches"]] == [(bug_id, True) for bug_id in BUGS]
    assert "README.md" not in done["tree"] and ".git" not in done["tree"]  # only the files a check reads
    assert f"{len(BUGS)} of {len(BUGS)} apply" in done["summary"] and commit in done["summary"]
    assert table_widths(done["summary"]) == [3] * (len(BUGS) + 1)
    assert [call[:2] for call in done["gh"]] == [["issue", "list"]]  # nothing refused, no issue open: quiet


@pytest.mark.slow  # a git repository and the workflow's steps (over a second)
@pytest.mark.needs_bug(A_BUG)
def test_a_patch_main_refuses_fails_the_check_and_opens_the_one_issue(upstream, tmp_path, stub_gh):
    test_path = BUGS[ONE_BUG].fixes.patch.test.path  # upstream now has a file where the patch adds one
    (upstream / test_path).write_text("# upstream's own\n")
    git("add", ".", cwd=upstream)
    git("-c", "user.name=u", "-c", "user.email=u@example.com", "commit", "--quiet", "-m", "a test", cwd=upstream)
    done = run_workflow(upstream, tmp_path / "run", stub_gh)
    refused = [p for p in done["report"]["patches"] if not p["applies"]]
    assert [p["bug"] for p in refused] == [ONE_BUG] and "code=1" in done["output"]
    assert "git apply --check refuses" in refused[0]["why"] and test_path in refused[0]["why"]
    assert f"{len(BUGS) - 1} of {len(BUGS)} apply" in done["summary"] and "**no**" in done["summary"]
    create = done["gh"][-1]
    assert create[:2] == ["issue", "create"] and f"refused={ONE_BUG} -->" in done["body"]


def check_of(refused: tuple[str, ...], commit: str = "a" * 40) -> MainCheck:
    rows = tuple(PatchRow(b, b not in refused, "git apply --check refuses it" if b in refused else "") for b in BUGS)
    return MainCheck(commit, "2026-12-08T04:29:00+00:00", rows)


def rolling_issue(tmp_path: Path, stub_gh: Path, found: MainCheck, open_issues: list[dict]) -> tuple[list, str]:
    report = tmp_path / "report.json"
    report.write_text(json.dumps(found.to_json()))
    log = tmp_path / "gh.log"
    log.unlink(missing_ok=True)
    proc = run(
        ["-m", "tracker.rolling_issue", "--report", str(report), "--gh", str(stub_gh / "gh")],
        env={"STUB_GH_LOG": str(log), "STUB_GH_OPEN": json.dumps(open_issues)},
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return [json.loads(line)[:3] for line in log.read_text().splitlines()], proc.stdout


def kept_issue(refused: str, number: int = 9) -> dict:
    return {"number": number, "body": f"table\n<!-- patches-on-main refused={refused} -->\n"}


SECOND = list(BUGS)[1]


@pytest.mark.parametrize(
    ("refused", "open_issues", "calls"),
    first_quick(
        [
            ((ONE_BUG,), [], [["issue", "list"], ["issue", "create", "--title"]]),
            ((ONE_BUG,), [kept_issue(ONE_BUG)], [["issue", "list"], ["issue", "edit", "9"]]),  # no new comment
            (
                (ONE_BUG, SECOND),
                [kept_issue(ONE_BUG)],
                [["issue", "list"], ["issue", "edit", "9"], ["issue", "comment", "9"]],
            ),
            ((), [kept_issue(ONE_BUG)], [["issue", "list"], ["issue", "comment", "9"], ["issue", "close", "9"]]),
            ((), [], [["issue", "list"]]),
            (
                (ONE_BUG,),
                [{"number": 4, "body": "same title, someone else's"}],
                [["issue", "list"], ["issue", "create"]],
            ),
        ]
    ),
    ids=["opened", "same-refusals-edited", "new-refusal-commented", "all-apply-closed", "quiet", "not-ours"],
)
def test_one_rolling_issue_is_opened_edited_commented_once_and_closed(tmp_path, stub_gh, refused, open_issues, calls):
    made, _ = rolling_issue(tmp_path, stub_gh, check_of(refused), open_issues)
    assert [call[: len(want)] for call, want in zip(made, calls)] == calls and len(made) == len(calls)


def test_a_failing_gh_is_one_line_exit_1(tmp_path):
    report = tmp_path / "report.json"
    report.write_text(json.dumps(check_of((ONE_BUG,)).to_json()))
    gh = tmp_path / "gh"
    gh.write_text("#!/bin/sh\necho 'gh: authentication required' >&2\nexit 4\n")
    gh.chmod(0o755)
    proc = run(["-m", "tracker.rolling_issue", "--report", str(report), "--gh", str(gh)])
    assert proc.returncode == 1 and proc.stderr == "rolling_issue: error: gh issue list: gh: authentication required\n"


def test_the_summary_keeps_a_refusal_inert_in_its_cell():
    hostile = "git apply --check refuses it: | <script>x</script> [a](http://e.com) @team\n# heading"
    found = MainCheck("b" * 40, "2026-12-08T04:29:00+00:00", (PatchRow(ONE_BUG, False, hostile),))
    text = summary(found)
    assert table_widths(text) == [3, 3] and live(text, own=("a", "h3")) == []
    assert [tag for tag, _ in tags(text)].count("a") == 2  # the two commit links; the refusal's is text


def test_docs_filing_says_not_yet_checked_until_a_check_reports():
    lines = (ROOT / "docs" / "filing.md").read_text().split("\n")
    between = "\n".join(lines[lines.index(BEGIN) + 1 : lines.index(END)])
    measured = re.fullmatch(
        r"\*\*Against pytorch/pytorch main:\*\* checked at commit \[`[0-9a-f]{10}`\]"
        r"\(https://github.com/pytorch/pytorch/commit/[0-9a-f]{40}\) .*",
        between,
        re.S,
    )
    assert between == docs_text(None) or measured, between
    assert max(map(len, between.split("\n"))) <= 100


@pytest.mark.slow  # a git repository and the workflow's steps (over a second)
def test_docs_take_only_a_report_that_names_a_measured_commit(tmp_path):
    docs = tmp_path / "filing.md"
    docs.write_text(f"# Filing\n\n{BEGIN}\n{docs_text(None)}\n{END}\n\nmore\n")
    report = tmp_path / "report.json"
    found = check_of((ONE_BUG,), commit="c" * 40)
    bad = [
        {**found.to_json(), "commit": "HEAD"},
        {**found.to_json(), "commit": "c" * 39},
        {**found.to_json(), "patches": found.to_json()["patches"][1:]},  # another catalogue's report
        {**found.to_json(), "checked_at": "last week"},
        [],
    ]
    for data in bad:
        report.write_text(json.dumps(data))
        proc = run(["-m", "tracker.patches_on_main", "--docs", str(docs), "--report", str(report)])
        assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "names no commit" in proc.stderr
        assert docs_text(None) in docs.read_text()
    report.write_text(json.dumps(found.to_json()))
    proc = run(["-m", "tracker.patches_on_main", "--docs", str(docs), "--report", str(report)])
    assert proc.returncode == 0, proc.stderr
    text = docs.read_text()
    assert "c" * 40 in text and "not yet checked" not in text and text.endswith(f"{END}\n\nmore\n")
    assert f"{len(BUGS) - 1} of {len(BUGS)} patches apply; `git apply --check` refuses `{ONE_BUG}`." in " ".join(
        text.split("\n")
    )
    docs.write_text("# no markers\n")
    proc = run(["-m", "tracker.patches_on_main", "--docs", str(docs), "--report", str(report)])
    assert proc.returncode == 2 and "cannot take the paragraph" in proc.stderr and docs.read_text() == "# no markers\n"


@pytest.mark.parametrize("where", ["missing", "not-git"])
def test_a_checkout_that_is_not_one_is_one_sentence_exit_2(tmp_path, where):
    target = tmp_path / "absent" if where == "missing" else tmp_path
    proc = run(["-m", "tracker.patches_on_main", "--checkout", str(target)])
    assert proc.returncode == 2 and proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert ("is not a folder" if where == "missing" else "is not a git checkout") in proc.stderr, proc.stderr


def test_paths_name_every_file_a_patch_reads():
    proc = run(["-m", "tracker.patches_on_main", "--paths"])
    listed = proc.stdout.split()
    for bug in BUGS.values():
        patch = bug.fixes.patch
        assert {*patch.files, patch.test.path, *([patch.test.runner] if patch.test.runner else [])} <= set(listed)
