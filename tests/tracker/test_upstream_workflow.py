"""The daily upstream-check workflow, run as its YAML says: the check's own command against loopback
indexes, and the rolling pull request against a local bare repository with a stub ``gh``."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from index_server import BUGGY, build_wheel, shape
from tracker_helpers import status_change

from helpers import A_BUG, ROOT, run
from repro.catalogue import BUGS
from repro.ledger import load
from tracker.rolling_pr import BRANCH, without_timestamps

WORKFLOW = ROOT / ".github" / "workflows" / "upstream-check.yml"
LEDGER = ROOT / "repro" / "ledger.json"
BEFORE_THE_API = [
    "1.0.0",
    "1.0.1",
    "1.1.0",
    "1.2.0",
    "1.3.0",
    "1.3.1",
    "1.4.0",
    "1.5.0",
    "1.5.1",
    "1.6.0",
    "1.7.0",
    "1.7.1",
]  # PyPI's torch releases before register_full_backward_hook (1.8.0)
TAG = "cp311-cp311-manylinux_2_28_x86_64"
FOUR = ("full-backward-hook-flag", "global-backward-hooks-scripted", "global-hooks-root-only", "module-compile-noop")


def workflow_command(program: str) -> list[str]:
    """The workflow's command line that runs ``program`` (without the shell's redirection)."""
    line = next(line for line in WORKFLOW.read_text().splitlines() if f"python -m {program} " in line)
    command = line[line.index(f"python -m {program} ") :].split(">")[0]
    return shlex.split(command)[1:]  # without "python": the tests run their own interpreter


OLD_TAGS = {  # what PyPI has for the releases before 1.8: no wheel for the runner's CPython 3.11
    "1.0.0": "cp37-cp37m-manylinux1_x86_64",
    "1.0.1": "cp37-cp37m-manylinux1_x86_64",
    "1.1.0": "cp37-cp37m-manylinux1_x86_64",
    "1.2.0": "cp37-cp37m-manylinux1_x86_64",
    "1.3.0": "cp38-cp38-manylinux1_x86_64",
    "1.3.1": "cp38-cp38-manylinux1_x86_64",
    "1.4.0": "cp38-cp38-manylinux1_x86_64",
    "1.5.0": "cp38-cp38-manylinux1_x86_64",
    "1.5.1": "cp39-cp39-manylinux1_x86_64",
    "1.6.0": "cp39-cp39-manylinux1_x86_64",
    "1.7.0": "cp39-cp39-manylinux1_x86_64",
    "1.7.1": "cp39-cp39-manylinux1_x86_64",
}


@pytest.mark.slow  # a check over every release (seconds)
def test_the_daily_check_over_every_release_with_the_committed_ledger_changes_no_status(index, tmp_path):
    """The first run with the committed ledger: the releases before 1.8 are new to it and lack the API of
    the original four bugs (not-applicable, no status change: the workflow's first run cried wolf before).
    The bugs catalogued later apply to them, but none has a wheel for the runner's Python: each is known
    not installable from the install index's file list, before any install is tried, and recorded so
    with the tags it does have. Exit 0: no error, nothing unmeasurable (before: 12 failed installs, exit 1)."""
    old_module = "class Module:\n    def register_forward_hook(self, hook):\n        return hook\n"
    ledger_keys = list(json.loads(LEDGER.read_text())["releases"])
    for version in BEFORE_THE_API:  # the oldest wheels lack the jit files too
        sources = shape(
            **{
                "torch/nn/modules/module.py": old_module,
                **({"torch/jit/_script.py": "", "torch/jit/_recursive.py": ""} if version < "1.2" else {}),
            }
        )
        index.wheels[f"torch-{version}-{OLD_TAGS[version]}.whl"] = build_wheel(sources, padding=1024)
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
    assert report["changes"] == [] and report["errors"] == [] and report["unmeasurable"] == []
    assert len(report["not_installable"]) == len(BEFORE_THE_API)
    assert sorted(r["version"] for r in report["releases"]) == sorted(BEFORE_THE_API)
    downloaded = [p for p in index.hits if p.startswith("/files/") and "-1." in p and "cp3" in p and "pip" in p]
    assert downloaded == []
    for version in BEFORE_THE_API:
        release = after["releases"][version]
        statics = {bug_id: b["static"]["verdict"] for bug_id, b in release["bugs"].items()}
        assert {statics[bug_id] for bug_id in FOUR} == {"not-applicable"}
        assert [i for i, b in release["bugs"].items() if "dynamic" in b] == []  # nothing run: no verdict
        assert "error" not in release and "failed_attempts" not in release
        interpreter_abi = "-".join(OLD_TAGS[version].split("-")[:2])
        assert release["not_installable"]["wheel_tags"] == [interpreter_abi]
        assert release["not_installable"]["tag"].startswith("cp311-")
        assert "register_full_backward_hook not found" in " ".join(release["bugs"][A_BUG]["static"]["evidence"])
    assert {v: after["releases"][v] for v in ledger_keys} == load(LEDGER)["releases"]  # as read: migrated
    again = run([*command, "--index-url", index.url], ledger=ledger)  # final for this tag: nothing rechecked
    assert again.returncode == 0 and json.loads(again.stdout)["releases"] == [], again.stderr[-2000:]


# --- the rolling pull request -------------------------------------------------------------------

STUB_GH = """\
import json, os, sys
with open(os.environ["STUB_GH_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:3] == ["pr", "list"]:
    print(os.environ.get("STUB_GH_OPEN", "[]"))
if sys.argv[1:3] == ["repo", "view"]:
    print(json.dumps({"owner": {"login": os.environ.get("STUB_GH_OWNER", OWNER)}}))
""".replace("OWNER", repr("us"))
OWNER = "us"  # the base repository's owner, as GitHub Actions sets GITHUB_REPOSITORY_OWNER
MAINTAINER = ["-c", "user.name=A Maintainer", "-c", "user.email=maintainer@example.com"]


def open_pr(number: int = 7, owner: str = OWNER, comments: tuple[str, ...] = ()) -> dict:
    """One open pull request as ``gh pr list --json`` lists it."""
    return {
        "number": number,
        "headRefName": BRANCH,
        "headRepositoryOwner": {"login": owner},
        "isCrossRepository": owner != OWNER,
        "comments": [{"body": body} for body in comments],
    }


@dataclass
class Repo:
    """A clone of a bare repository (``remote``) whose main branch holds the committed ledger, and a stub gh
    that logs its calls and lists ``STUB_GH_OPEN`` as the open pull requests."""

    path: Path
    remote: Path
    gh: Path
    log: Path

    @property
    def summary(self) -> Path:
        return self.path.parent / "summary.md"

    def git(self, *args: str, where: Path | None = None) -> str:
        return subprocess.run(["git", *args], cwd=where or self.path, check=True, capture_output=True, text=True).stdout


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


def rolling_pr(
    repo: Repo, report: dict, open_prs: list[dict] | str = "[]", *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """The workflow's command line, with the stub gh listing ``open_prs``, Actions' owner variable set and
    the step summary written to ``summary.md`` beside the clone."""
    (repo.path.parent / "report.json").write_text(json.dumps(report))
    command = workflow_command("tracker.rolling_pr")
    command[command.index("--base") + 1] = "main"  # the workflow passes "${GITHUB_REF_NAME}"
    command[command.index("--report") + 1] = str(repo.path.parent / "report.json")
    listed = open_prs if isinstance(open_prs, str) else json.dumps(open_prs)
    return run(
        [*command, "--gh", str(repo.gh), *extra],
        cwd=repo.path,
        env={
            "STUB_GH_LOG": str(repo.log),
            "STUB_GH_OPEN": listed,
            "GITHUB_REPOSITORY_OWNER": OWNER,
            "GITHUB_STEP_SUMMARY": str(repo.summary),
            **(env or {}),
        },
    )


def edit_ledger(repo: Repo, change) -> None:
    path = repo.path / "repro" / "ledger.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n")


def gh_calls(repo: Repo) -> list[list[str]]:
    return [json.loads(line) for line in repo.log.read_text().splitlines()] if repo.log.exists() else []


def new_release(version: str):
    def change(data: dict) -> None:
        data["releases"][version] = {
            "checked_at": "2026-12-03T05:17:00+00:00",
            "yanked": False,
            "bugs": {A_BUG: {"static": {"verdict": "present", "evidence": []}}},
        }

    return change


@pytest.mark.slow  # a git repository and the workflow's steps (over a second)
def test_one_branch_rebuilt_from_main_and_one_pull_request_edited_in_place(repo):
    edit_ledger(repo, new_release("2.16.0"))
    first = rolling_pr(repo, {"releases": [{"version": "2.16.0", "bugs": {}}], "changes": []})
    assert first.returncode == 0, first.stderr
    assert gh_calls(repo)[-1][:2] == ["pr", "create"] and "--head" in gh_calls(repo)[-1]
    repo.git("checkout", "--quiet", "--force", "main")  # the next day's fresh checkout of main
    edit_ledger(repo, new_release("2.16.1"))
    second = rolling_pr(
        repo,
        {"releases": [{"version": "2.16.1", "bugs": {}}], "changes": [status_change("2.16.1", "present", "fixed")]},
        [open_pr(7)],
    )
    assert second.returncode == 0, second.stderr
    edit = gh_calls(repo)[-1]
    assert edit[:3] == ["pr", "edit", "7"] and f"{A_BUG}: 2.16.1: present -> fixed" in edit[edit.index("--title") + 1]
    assert [call[:2] for call in gh_calls(repo)].count(["pr", "create"]) == 1  # never a second pull request
    history = repo.git("log", "--format=%s", BRANCH, where=repo.remote).splitlines()
    assert len(history) == 2 and history[1] == "ledger"  # one commit on top of main, force-pushed
    pushed = json.loads(repo.git("show", f"{BRANCH}:repro/ledger.json", where=repo.remote))
    assert pushed == json.loads((repo.path / "repro" / "ledger.json").read_text())  # main + today's run
    assert "2.16.1" in pushed["releases"] and "2.16.0" not in pushed["releases"]  # yesterday's: re-checked


@pytest.mark.slow  # a git repository and the workflow's steps
def test_timestamps_alone_propose_nothing(repo):
    def restamp(data: dict) -> None:
        for entry in data["releases"].values():
            entry["checked_at"] = "2026-12-03T05:17:00+00:00"

    edit_ledger(repo, restamp)
    proc = rolling_pr(repo, {"releases": [], "changes": []})
    assert proc.returncode == 0 and "nothing to propose" in proc.stdout
    assert gh_calls(repo) == [] and BRANCH not in repo.git("branch", "--list", where=repo.remote)


@pytest.mark.slow  # a git repository and the workflow's steps
def test_a_failing_gh_is_one_line_exit_1(repo):
    edit_ledger(repo, new_release("2.16.0"))
    repo.gh.write_text("#!/bin/sh\necho 'gh: authentication required' >&2\nexit 4\n")
    proc = rolling_pr(repo, {"releases": [], "changes": []})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == ["rolling_pr: error: gh pr list: gh: authentication required"]


def test_ledger_timestamps_are_all_that_is_ignored():
    ledger = json.loads(LEDGER.read_text())
    stripped = without_timestamps(ledger)
    assert "checked_at" not in json.dumps(stripped) and set(stripped["releases"]) == set(ledger["releases"])
    assert re.search(r'"checked_at"', LEDGER.read_text())  # the committed ledger has stamps to strip


# --- the rolling pull request never destroys work (issue 20) ------------------------------------


def push_to_branch(repo: Repo, tmp_path: Path, identity: list[str], amend: bool = False) -> str:
    """Another clone pushes a commit onto the rolling branch (or rewrites the check's own commit); its sha."""
    other = tmp_path / "maintainer"
    repo.git("clone", "--quiet", "--branch", BRANCH, str(repo.remote), str(other), where=tmp_path)
    (other / "tests.txt").write_text("flip the tests\n")
    repo.git("add", "--", "tests.txt", where=other)
    repo.git(
        *identity, "commit", "--quiet", *(["--amend", "--no-edit"] if amend else ["-m", "flip the tests"]), where=other
    )
    repo.git("push", "--quiet", "--force", "origin", BRANCH, where=other)
    return repo.git("rev-parse", "HEAD", where=other).strip()


FIRST_REPORT = {"releases": [{"version": "2.16.0", "bugs": {}}], "changes": []}
NEXT_REPORT = {
    "releases": [{"version": "2.16.1", "bugs": {}}],
    "changes": [status_change("2.16.1", "present", "fixed")],
}


@pytest.mark.parametrize(
    "identity, amend",
    [
        (MAINTAINER, False),  # a maintainer's commit on top of the check's
        (
            [
                "-c",
                "user.name=upstream-check",
                "-c",
                "user.email=upstream-check@users.noreply.github.com",
                "-c",
                "committer.name=A Maintainer",
                "-c",
                "committer.email=maintainer@example.com",
            ],
            True,
        ),  # rewritten
        (["-c", "user.name=upstream-check", "-c", "user.email=someone@example.com"], False),  # the name, not the email
    ],
    ids=["maintainer-commit", "check-commit-recommitted", "impostor-email"],
)
@pytest.mark.slow  # a git repository and two workflow runs each (1.5 s)
def test_a_branch_others_pushed_to_is_left_and_the_pull_request_told_once(repo, tmp_path, identity, amend):
    edit_ledger(repo, new_release("2.16.0"))
    assert rolling_pr(repo, FIRST_REPORT).returncode == 0
    kept = push_to_branch(repo, tmp_path, identity, amend)
    repo.git("checkout", "--quiet", "--force", "main")
    edit_ledger(repo, new_release("2.16.1"))
    proc = rolling_pr(repo, NEXT_REPORT, [open_pr(7)])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"not force-pushed: {BRANCH} holds 1 commit the daily check did not make ({kept[:7]})"
    ]
    assert repo.git("rev-parse", BRANCH, where=repo.remote).strip() == kept  # the commit survives
    comments = [call for call in gh_calls(repo) if call[:2] == ["pr", "comment"]]
    assert len(comments) == 1 and comments[0][2] == "7"
    assert not [call for call in gh_calls(repo) if call[:2] in (["pr", "edit"], ["pr", "create"])][1:]
    assert "[!WARNING]" in repo.summary.read_text() and kept[:10] in repo.summary.read_text()
    marker = f"<!-- upstream-check: left {kept} -->"
    again = rolling_pr(repo, NEXT_REPORT, [open_pr(7, comments=("older", marker))])  # told already
    assert again.returncode == 0 and "not force-pushed" in again.stdout
    assert len([call for call in gh_calls(repo) if call[:2] == ["pr", "comment"]]) == 1


@pytest.mark.slow  # a git repository and the workflow's steps (over a second)
def test_no_open_pull_request_no_comment_and_the_branch_still_kept(repo, tmp_path):
    edit_ledger(repo, new_release("2.16.0"))
    assert rolling_pr(repo, FIRST_REPORT).returncode == 0
    kept = push_to_branch(repo, tmp_path, MAINTAINER)
    edit_ledger(repo, new_release("2.16.1"))
    proc = rolling_pr(repo, NEXT_REPORT, env={"GITHUB_STEP_SUMMARY": ""})
    assert proc.returncode == 0 and "not force-pushed" in proc.stdout and not repo.summary.exists()
    assert repo.git("rev-parse", BRANCH, where=repo.remote).strip() == kept
    assert not [call for call in gh_calls(repo) if call[:2] == ["pr", "comment"]]


@pytest.mark.slow  # a git repository and the workflow's steps (over a second)
def test_a_step_summary_nobody_reads_is_a_warning_not_a_hang(repo, tmp_path):
    """A FIFO without a reader as $GITHUB_STEP_SUMMARY: the old open() blocked for ever."""
    import os

    edit_ledger(repo, new_release("2.16.0"))
    assert rolling_pr(repo, FIRST_REPORT).returncode == 0
    push_to_branch(repo, tmp_path, MAINTAINER)
    edit_ledger(repo, new_release("2.16.1"))
    fifo = tmp_path / "summary.fifo"
    os.mkfifo(fifo)
    proc = rolling_pr(repo, NEXT_REPORT, env={"GITHUB_STEP_SUMMARY": str(fifo)})
    assert proc.returncode == 0 and "not force-pushed" in proc.stdout
    assert proc.stderr.strip().splitlines()[-1].startswith("rolling_pr: warning: GITHUB_STEP_SUMMARY cannot be")


@pytest.mark.slow  # a git repository and the workflow's steps (over a second)
def test_a_shallow_checkout_rebuilds_its_own_branch_after_main_moved_on(repo, tmp_path):
    """The workflow's checkout has one commit of main only: the branch's base (yesterday's main, by
    someone else) must be seen as main's, not as a stranger's commit."""
    edit_ledger(repo, new_release("2.16.0"))
    assert rolling_pr(repo, FIRST_REPORT).returncode == 0
    repo.git("checkout", "--quiet", "--force", "main")
    (repo.path / "README").write_text("moved on\n")
    repo.git("add", "--", "README")
    repo.git(*MAINTAINER, "commit", "--quiet", "-m", "main moves on")
    repo.git("push", "--quiet", "origin", "main")
    shallow = tmp_path / "shallow"
    repo.git(
        "clone",
        "--quiet",
        "--depth",
        "1",
        "--single-branch",
        "--branch",
        "main",
        f"file://{repo.remote}",
        str(shallow),
        where=tmp_path,
    )
    assert repo.git("rev-parse", "--is-shallow-repository", where=shallow).strip() == "true"
    repo.path = shallow
    edit_ledger(repo, new_release("2.16.1"))
    proc = rolling_pr(repo, NEXT_REPORT, [open_pr(7)])
    assert proc.returncode == 0 and proc.stdout.startswith("pull request #7 updated"), proc.stdout + proc.stderr
    history = repo.git("log", "--format=%s", BRANCH, where=repo.remote).splitlines()
    assert history[1:] == ["main moves on", "ledger"]  # rebuilt on today's main, yesterday's commit replaced


@pytest.mark.slow  # a git repository and the workflow's steps (over a second)
def test_a_forks_pull_request_with_the_same_branch_name_is_never_edited(repo):
    edit_ledger(repo, new_release("2.16.0"))
    proc = rolling_pr(repo, FIRST_REPORT, [open_pr(9, owner="stranger")])
    assert proc.returncode == 0 and proc.stdout.startswith("pull request opened")
    calls = gh_calls(repo)
    listing = next(call for call in calls if call[:2] == ["pr", "list"])
    assert "headRepositoryOwner" in listing[listing.index("--json") + 1]
    assert [call[:2] for call in calls].count(["pr", "create"]) == 1
    assert [call for call in calls if "9" in call] == []


@pytest.mark.slow  # a git repository and the workflow's steps (over a second)
def test_a_ledger_path_starting_with_a_dash_is_a_path(repo):
    (repo.path / "-ledger.json").write_bytes(LEDGER.read_bytes())
    repo.git("add", "--", "-ledger.json")
    repo.git(*MAINTAINER, "commit", "--quiet", "-m", "dash")
    repo.git("push", "--quiet", "origin", "main")
    data = json.loads((repo.path / "-ledger.json").read_text())
    new_release("2.16.0")(data)
    (repo.path / "-ledger.json").write_text(json.dumps(data))
    proc = rolling_pr(repo, FIRST_REPORT, "[]", "--ledger=-ledger.json")
    assert proc.returncode == 0, proc.stderr
    pushed = json.loads(repo.git("show", f"{BRANCH}:-ledger.json", where=repo.remote))
    assert "2.16.0" in pushed["releases"]


def many_releases(count: int, detail: str = "x" * 500) -> tuple[dict, dict]:
    """A report of ``count`` releases, each with a long dynamic detail, and its ledger."""
    releases = [
        {
            "version": f"3.{n}.0",
            "yanked": False,
            "probe": None,
            "bugs": {
                bug_id: {
                    "static": {"verdict": "present", "evidence": [detail]},
                    "dynamic": {"verdict": "present", "detail": detail},
                }
                for bug_id in BUGS
            },
        }
        for n in range(count)
    ]
    return {"releases": releases, "errors": []}, json.loads(LEDGER.read_text())


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ("fixed", "the report's changes must be a list"),
        ([f"{A_BUG}: 2.16.1: present -> fixed"], "a change must be an object with exactly bug_id, kind"),
        ([{**status_change("2.16.1", "present", "fixed"), "extra": 1}], "must be an object with exactly"),
        ([{**status_change("2.16.1", "present", "fixed"), "after": 3}], "before and after strings or null"),
    ],
    ids=["not-a-list", "a-printed-line", "an-extra-field", "a-number"],
)
def test_a_report_whose_changes_are_not_records_is_one_sentence(changes, said):
    """The rolling pull request reads changes as records: never recovers a bug id from a printed line."""
    from tracker.rolling_pr import title

    with pytest.raises(ValueError, match=re.escape(said)):
        title({"releases": [], "changes": changes})


@pytest.mark.parametrize(
    "count, change, errors",
    [
        (1, "u" * 20_000, 0),  # one status change with a 20,000-character URL in it
        pytest.param(400, "present -> fixed", 0, marks=pytest.mark.slow),  # a history sweep (1 s)
        pytest.param(400, "present -> fixed", 500, marks=pytest.mark.slow),  # and every release failed once as well
        (120, "\n".join(["line"] * 2000), 0),  # a change that is many lines
    ],
    ids=["long-change", "400-releases", "400-releases-and-errors", "multi-line-change"],
)
def test_the_pull_request_title_and_body_stay_within_githubs_limits(count, change, errors):
    from tracker.rolling_pr import BODY_LIMIT, CLOSING, TITLE_LIMIT, body, title

    report, ledger = many_releases(count)
    report["changes"] = [
        status_change("3.0.0", "present", change),
        *(status_change(f"3.{n}.0", "present", "fixed") for n in range(70)),
    ]
    report["errors"] = [f"3.{n}.0: GET http://x/{'e' * 1000} answered HTTP 500" for n in range(errors)]
    text, made = title(report), body(report, ledger)
    assert len(text) <= TITLE_LIMIT and "\n" not in text and text.endswith(" and 70 more")
    assert len(made) <= BODY_LIMIT and made.endswith(CLOSING)
    lines = made.splitlines()
    assert lines[0].startswith("**Status changed**") and lines[1].startswith(f"- {A_BUG}: 3.0.0: ")
    assert [(len(line), line[:60]) for line in lines[1:52] if len(line) > 400] == []  # each change capped
    assert "- 21 more: see the ledger's diff" in lines
    rows = [line for line in lines if line.startswith("| 3.")]
    if count > len(rows):  # what did not fit is counted, never silently dropped
        assert f"{count - len(rows)} more releases checked are left out here: the ledger's diff holds them all." in made
    # As many as fit, not none: each release has a row per catalogued bug, here each with a 500-character
    # detail (cut to its cap), so with 17 bugs about eight releases' rows fit in GitHub's limit.
    assert len(rows) >= min(count, 5)


# --- the explorer's database, kept between runs as an artifact -------------------------------------

STUB_RUNS = """\
import json, os, pathlib, sys
with open(os.environ["STUB_GH_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:3] == ["run", "list"]:
    print(os.environ["STUB_GH_LAST"])
if sys.argv[1:3] == ["run", "download"]:
    if os.environ.get("STUB_GH_DOWNLOAD") != "ok":
        sys.exit("no artifact found")
    folder = pathlib.Path(sys.argv[sys.argv.index("--dir") + 1]) / "ab12"
    folder.mkdir(parents=True)
    (folder / "cd34").write_text("{}")
"""


def _steps() -> list[dict]:
    import yaml

    return yaml.safe_load(WORKFLOW.read_text())["jobs"]["check"]["steps"]


@pytest.mark.parametrize(
    ("last", "download", "said", "kept"),
    [
        ("", "ok", "no earlier successful run: the explorer starts with an empty database", False),
        ("42", "ok", "", True),
        ("42", "fails", "run 42 kept no explorer database (expired or none): starting empty", False),
    ],
    ids=["first-run", "kept", "expired"],
)
def test_the_explorer_database_the_last_successful_run_kept_is_fetched_or_the_run_starts_empty(
    tmp_path, last, download, said, kept
):
    step = next(s for s in _steps() if "gh run download" in s.get("run", ""))
    (tmp_path / "bin").mkdir()
    gh = tmp_path / "bin" / "gh"
    gh.write_text(f"#!{sys.executable}\n{STUB_RUNS}")
    gh.chmod(0o755)
    log = tmp_path / "gh.log"
    proc = subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={
            "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin",
            "STUB_GH_LOG": str(log),
            "STUB_GH_LAST": last,
            "STUB_GH_DOWNLOAD": download,
        },
    )
    assert proc.returncode == 0 and said in proc.stdout, proc.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls[0][:4] == ["run", "list", "--workflow", WORKFLOW.name]
    fetched = ["run", "download", last, "--name", "explore-database", "--dir", "explore-database"]
    assert calls[1:] == ([fetched] if last else [])
    assert (tmp_path / "explore-database" / "ab12" / "cd34").exists() is kept


def test_the_folder_the_check_explores_with_is_the_one_fetched_and_the_one_kept():
    command = workflow_command("tracker.check_upstream")
    folder = command[command.index("--explore-database") + 1]
    fetch = next(s for s in _steps() if "gh run download" in s.get("run", ""))["run"]
    keep = next(s for s in _steps() if s.get("uses", "").startswith("actions/upload-artifact"))
    assert f"--name {keep['with']['name']} --dir {folder}" in fetch
    assert keep["with"]["path"] == folder and keep["if"] == "always()"
