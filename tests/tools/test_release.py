"""tools.release: the version scheme (monotonic, idempotent for a tagged commit, a hand bump resets the
suffix), the release notes (status changes between two ledgers, within a length limit) and the packaging
config (every package under repro/ and tracker/ ships)."""

from __future__ import annotations

import copy
import json
import re
from datetime import date
from typing import Any

import pytest
import tomllib
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from release_helpers import PYPROJECT, commit, git
from setuptools import find_namespace_packages  # type: ignore[import-untyped]  # no stubs in the test extra

from helpers import ROOT
from tools import release
from tools.release import ReleaseError, code_version, decide, next_version, notes, status_changes

DAY = date(2026, 12, 3)


def test_first_release_is_the_code_version():
    assert next_version("0.1.0", DAY, []) == Version("0.1.0")


def test_two_releases_the_same_day_count_up():
    first = next_version("0.1.0", DAY, ["0.1.0"])
    second = next_version("0.1.0", DAY, ["0.1.0", first])
    assert (str(first), str(second)) == ("0.1.0.post2026120301", "0.1.0.post2026120302")


def test_a_sequence_of_releases_is_monotonic_and_a_hand_bump_resets_the_suffix():
    """Ledger releases over days (two on one), a hand bump, more ledger releases: each version is greater
    than every earlier one, as pip orders them (packaging's Version is pip's ordering)."""
    steps = [
        ("0.1.0", date(2026, 12, 3)),
        ("0.1.0", date(2026, 12, 3)),
        ("0.1.0", date(2026, 12, 3)),
        ("0.1.0", date(2026, 12, 4)),
        ("0.2.0", date(2026, 12, 4)),
        ("0.2.0", date(2026, 12, 4)),
        ("0.2.0", date(2027, 1, 2)),
        ("1.0.0", date(2027, 1, 2)),
    ]
    released: list[Version] = []
    for code, day in steps:
        version = next_version(code, day, released)
        assert [earlier for earlier in released if not version > earlier] == [], (version, released)
        released.append(version)
    assert list(map(str, released)) == [
        "0.1.0",
        "0.1.0.post2026120301",
        "0.1.0.post2026120302",
        "0.1.0.post2026120401",
        "0.2.0",
        "0.2.0.post2026120401",
        "0.2.0.post2027010201",
        "1.0.0",
    ]
    assert sorted(released, key=lambda v: Version(str(v))) == released


def test_a_day_earlier_than_the_latest_release_still_orders_after_it():
    """A committer clock behind the latest release's day: the count continues from the latest."""
    assert str(next_version("0.1.0", date(2026, 12, 1), ["0.1.0", "0.1.0.post2026120305"])) == "0.1.0.post2026120306"


def test_a_tagged_commit_keeps_its_version():
    existing = ["0.1.0", "0.1.0.post2026120301", "0.1.0.post2026120302"]
    assert (
        str(next_version("0.1.0", date(2026, 12, 9), existing, tagged=["0.1.0.post2026120301"]))
        == "0.1.0.post2026120301"
    )


def test_a_code_version_below_the_latest_release_is_refused():
    with pytest.raises(
        ReleaseError, match="below the latest release 0.2.0.post2026120301: bump it by hand above 0.2.0"
    ):
        next_version("0.1.5", DAY, ["0.2.0", "0.2.0.post2026120301"])


@pytest.mark.parametrize("written", ["0.1.0.post1", "0.2.0rc1", "0.1.0+local", "1!0.1.0", "0.1.0.dev1", "zero"])
def test_the_code_version_must_be_a_plain_release(written):
    with pytest.raises(ReleaseError, match="pyproject.toml's code-version"):
        code_version(PYPROJECT.format(written))


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[project]\nversion = "0.1.0"\n', "has no code-version string in [tool.scriptmodule-hook-repro]"),
        ("[tool.scriptmodule-hook-repro]\ncode-version = 1\n", "has no code-version string"),
        ('tool = "x"\n', "has no code-version string"),
        ("[tool\n", "is not TOML"),
    ],
    ids=["project-version-only", "a-number", "tool-not-a-table", "broken"],
)
def test_a_pyproject_without_a_readable_code_version_is_one_sentence(text, said):
    with pytest.raises(ReleaseError, match=re.escape(said)):
        code_version(text)


def test_the_code_version_is_read_from_its_own_table():
    """Not [project] version (setuptools-scm's, dynamic) nor another tool's ``version``."""
    assert code_version(PYPROJECT.format("0.3.1")) == Version("0.3.1")


def test_the_ledger_releases_of_a_version_are_what_downstream_pins_take():
    """What docs/downstream.md says of the versions this scheme makes: `>=` takes each ledger release of
    a version, `==` freezes one, and the next hand bump is above them all."""
    day_one, day_two = next_version("0.1.0", DAY, ["0.1.0"]), next_version("0.1.0", date(2026, 12, 4), ["0.1.0"])
    second_same_day = next_version("0.1.0", DAY, ["0.1.0", day_one])
    made = [Version("0.1.0"), day_one, second_same_day, day_two, next_version("0.2.0", DAY, [day_two])]
    assert made == sorted(made) and len(set(made)) == len(made)  # never backwards, never twice
    assert list(SpecifierSet(">=0.1").filter(map(str, made))) == [str(v) for v in made]
    assert list(SpecifierSet(f"=={day_one}").filter(map(str, made))) == [str(day_one)]
    assert list(SpecifierSet(">0.1.0").filter(map(str, made))) == ["0.2.0"]  # `>` leaves out 0.1.0's ledger releases


@pytest.mark.parametrize(
    ("tagged", "merged", "code", "changed", "release_", "reason"),
    [
        ([], [], "0.1.0", False, True, "the first release"),
        (["0.1.0"], ["0.1.0"], "0.1.0", False, True, "the commit is already tagged v0.1.0"),
        ([], ["0.1.0"], "0.1.0", True, True, "repro/ledger.json changed since v0.1.0"),
        ([], ["0.1.0"], "0.2.0", False, True, "the code version 0.2.0 is not released yet"),
        ([], ["0.1.0"], "0.1.0", False, False, "nothing to release: the ledger and the code version are as in v0.1.0"),
    ],
)
def test_decide(tagged, merged, code, changed, release_, reason):
    plan = decide(code, DAY, merged, tagged, merged, changed)
    assert (plan.release, plan.reason) == (release_, reason)


@pytest.mark.parametrize(
    ("existing", "tagged", "merged", "tags", "release_", "version", "reason"),
    [
        # tags that are not of the scheme count for nothing: the scheme's next version, as if absent
        (["0.1.0", "1!0.0.1"], [], ["0.1.0", "1!0.0.1"], None, True, "0.1.0.post2026120301", "changed since"),
        (["0.1.0", "0.1.0+local"], [], ["0.1.0"], None, True, "0.1.0.post2026120301", "changed since"),
        (["0.1.0", "0.2.0rc1"], [], ["0.1.0"], None, True, "0.1.0.post2026120301", "changed since"),
        (["0.1.0", "0.1.0.post7"], [], ["0.1.0"], None, True, "0.1.0.post2026120301", "changed since"),
        # a rerun for a commit tagged with an older release: nothing, never a higher version
        (["0.1.0", "0.1.0.post2026120201"], ["0.1.0"], ["0.1.0"], None, False, "0.1.0", "older than the latest"),
        # a commit beside the latest release (not descending from its tagged commit): nothing
        (["0.1.0", "0.1.0.post2026120201"], [], ["0.1.0"], None, False, "0.1.0.post2026120301", "not descend"),
        # PyPI lists a release whose tag is missing: descent is judged on the tags
        (["0.1.0", "0.1.0.post2026120201"], [], ["0.1.0"], ["0.1.0"], True, "0.1.0.post2026120301", "changed since"),
        # an epoch tag on this very commit is not the commit's version
        (["0.1.0"], ["1!0.0.1"], ["0.1.0", "1!0.0.1"], None, True, "0.1.0.post2026120301", "changed since"),
    ],
)
def test_a_version_never_goes_backwards_nor_leaves_the_scheme(
    existing, tagged, merged, tags, release_, version, reason
):
    plan = decide("0.1.0", DAY, existing, tagged, merged, True, tags)
    assert (plan.release, str(plan.version)) == (release_, version) and reason in plan.reason, plan


# --- the release notes ------------------------------------------------------------------------------


def ledger(**bugs) -> dict:
    return {
        "schema": 2,
        "bugs": {bug: {"fixed_in": None, "regressions": []} for bug in bugs},
        "releases": {"2.13.0": {"bugs": {bug: {"dynamic": {"verdict": verdict}} for bug, verdict in bugs.items()}}},
    }


@pytest.fixture
def two_ledgers():
    before = ledger(**{"bug-a": "present", "bug-b": "fixed"})
    before["bugs"]["bug-b"]["fixed_in"] = "2.12.0"
    after = copy.deepcopy(before)
    after["bugs"]["bug-a"]["fixed_in"] = "2.14.0"
    after["bugs"]["bug-b"]["regressions"] = ["2.14.0"]
    after["releases"]["2.14.0"] = {
        "bugs": {"bug-a": {"dynamic": {"verdict": "fixed"}}, "bug-b": {"dynamic": {"verdict": "present"}}}
    }
    after["releases"]["2.13.0"]["checked_at"] = "2026-12-03T00:00:00+00:00"  # no status change
    return before, after


def test_notes_list_each_bugs_status_changes(two_ledgers):
    before, after = two_ledgers
    text = notes(before, after, "0.1.0.post2026120301", "0.1.0")
    assert text.splitlines()[:3] == [
        "Release `0.1.0.post2026120301` of scriptmodule-hook-repro: the ledger (`repro/ledger.json`) as of this "
        "commit.",
        "",
        "Status changes since `v0.1.0`:",
    ]
    assert "\n### `bug-a`\n- `fixed_in none -> 2.14.0`\n- `2.14.0: present -> fixed`\n" in text
    assert (
        "\n### `bug-b`\n- `2.14.0 regressed (present again after a confirmed fix)`\n"
        "- `2.14.0: fixed -> present`\n" in text
    )
    assert text.count("\n- ") == 4


def test_notes_of_a_ledger_with_no_status_change(two_ledgers):
    before, _ = two_ledgers
    after = copy.deepcopy(before)
    after["releases"]["2.13.0"]["checked_at"] = "2026-12-04T00:00:00+00:00"
    assert "None: the ledger changed (new checks, times or evidence), but no bug's status did." in notes(
        before, after, "0.1.0.post2026120401", "0.1.0.post2026120301"
    )


def test_notes_name_a_newly_tracked_bug_and_code_span_outside_text(two_ledgers):
    before, after = two_ledgers
    after["bugs"]["new`bug\nx"] = {"fixed_in": None, "regressions": []}
    text = notes(before, after, "1.0", "0.9")
    assert "### ``new`bug\\x0ax``\n- `newly tracked`" in text


def test_notes_of_the_first_release_say_each_bugs_fixed_in(two_ledgers):
    _, after = two_ledgers
    text = notes(None, after, "0.1.0", None)
    assert "The first release. What the ledger says of each bug:" in text
    assert "### `bug-a`\n- `fixed_in 2.14.0`\n" in text
    assert "### `bug-b`\n- `fixed_in 2.12.0`\n- `2.14.0 regressed (present again after a confirmed fix)`\n" in text


def test_notes_stay_within_the_limit_and_count_what_they_leave_out(two_ledgers):
    before, after = two_ledgers
    full = notes(before, after, "0.1.0.post2026120301", "0.1.0")
    assert len(full) < release.NOTES_LIMIT == 125_000
    changes = [line for line in full.splitlines() if line.startswith("- ")]
    for limit in (len(full) - 1, len(full) - 100):
        cut = notes(before, after, "0.1.0.post2026120301", "0.1.0", limit=limit)
        shown = [line for line in cut.splitlines() if line.startswith("- ")]
        assert len(cut) <= limit and 0 < len(shown) < 4 and shown == changes[: len(shown)], cut
        left = 4 - len(shown)
        assert (
            f"\n... and {left} more change{'s' if left != 1 else ''}, left out to keep these notes within "
            f"{limit} characters: compare `repro/ledger.json` between the tags.\n" in cut
        ), cut
        assert "Upgrade with" not in cut
    assert notes(before, after, "0.1.0.post2026120301", "0.1.0", limit=250).endswith(
        "`v0.1.0`:\n\n... and 4 more changes, left out to keep these notes within 250 characters: compare "
        "`repro/ledger.json` be"
    )
    assert len(notes(before, after, "0.1.0.post2026120301", "0.1.0", limit=50)) == 50


# --- the package's version: setuptools-scm's, one source ------------------------------------------------


def test_the_version_has_one_source():
    """[project] version is dynamic (setuptools-scm; the release build pretends the planned one), and
    repro.__version__ is what the installed metadata says: no second copy to keep equal."""
    from importlib.metadata import version

    import repro

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"] and pyproject["project"]["dynamic"] == ["version"]
    assert "setuptools-scm>=8" in pyproject["build-system"]["requires"]
    assert repro.__version__ == version("scriptmodule-hook-repro")
    assert code_version((ROOT / "pyproject.toml").read_text()) >= Version("0.1.0")


def test_every_package_under_repro_is_packaged_and_nothing_else():
    """pyproject's find patterns cover every directory of repro/ with an __init__.py and no other: tracker/
    is tooling run from a checkout (.ci/check-package checks the wheel)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "repro").rglob("__init__.py")}
    found = set(find_namespace_packages(str(ROOT), include=config["include"]))
    assert sorted(on_disk - found) == [] and {"repro", "repro.filing"} <= on_disk
    assert sorted(name for name in found if name.split(".")[0] != "repro") == []


# --- against git: a scratch repository (tests/release_helpers.py) -------------------------------------


def cli(repo, *args, capsys):
    assert release.main(["--root", str(repo), *args]) == 0
    return capsys.readouterr().out


def plan(repo, capsys, *args):
    return dict(line.split("=", 1) for line in cli(repo, "plan", *args, capsys=capsys).splitlines())


def test_plan_and_notes_over_a_repositorys_history(tmp_path, capsys, two_ledgers):
    before, after = two_ledgers
    repo = tmp_path / "repo"
    (repo / "repro").mkdir(parents=True)
    git(repo, "init", "-q")
    commit(
        repo, "2026-12-03T10:00:00+00:00", code="0.1.0", data={"schema": 1, "fixed_in": None, "releases": {}}
    )  # an old tag's ledger may be schema 1
    assert plan(repo, capsys) == {"version": "0.1.0", "release": "true", "previous": "", "reason": "the first release"}
    git(repo, "tag", "v0.1.0")
    assert plan(repo, capsys)["reason"] == "the commit is already tagged v0.1.0"

    commit(repo, "2026-12-03T11:00:00+00:00", data=before)
    assert plan(repo, capsys) == {
        "version": "0.1.0.post2026120301",
        "release": "true",
        "previous": "v0.1.0",
        "reason": "repro/ledger.json changed since v0.1.0",
    }
    git(repo, "tag", "v0.1.0.post2026120301")
    commit(repo, "2026-12-03T23:59:00+00:00", data=after)
    assert plan(repo, capsys)["version"] == "0.1.0.post2026120302"
    text = cli(repo, "notes", "--version", "0.1.0.post2026120302", capsys=capsys)
    assert "Release `0.1.0.post2026120302`" in text and "Status changes since `v0.1.0.post2026120301`:" in text
    assert "- `2.14.0: present -> fixed`" in text
    published = tmp_path / "pypi.json"  # PyPI has a release the tags lack (a run that failed before tagging)
    published.write_text(json.dumps({"releases": {"0.1.0": [], "0.1.0.post2026120302": []}}))
    assert plan(repo, capsys, "--published", str(published))["version"] == "0.1.0.post2026120303"
    git(repo, "tag", "v0.1.0.post2026120302")
    assert plan(repo, capsys)["version"] == "0.1.0.post2026120302"  # tagged: the same again

    commit(repo, "2026-12-04T08:00:00+00:00", readme="docs only")
    assert plan(repo, capsys) == {
        "version": "0.1.0.post2026120401",
        "release": "false",
        "previous": "v0.1.0.post2026120302",
        "reason": "nothing to release: the ledger and the code version are as in v0.1.0.post2026120302",
    }
    commit(repo, "2026-12-04T09:00:00+00:00", code="0.2.0")
    assert plan(repo, capsys) == {
        "version": "0.2.0",
        "release": "true",
        "previous": "v0.1.0.post2026120302",
        "reason": "the code version 0.2.0 is not released yet",
    }
    bumped = cli(repo, "notes", "--version", "0.2.0", capsys=capsys)
    assert "Status changes since `v0.1.0.post2026120302`:" in bumped and "None: the ledger changed" in bumped


def test_notes_take_only_a_version_of_the_scheme(tmp_path, capsys):
    assert release.main(["--root", str(tmp_path), "notes", "--version", "1!0.1.0"]) == 2
    assert capsys.readouterr().err.startswith("error: --version 1!0.1.0 is not a version of the scheme")


# --- the workflow: what it runs, and how it publishes ----------------------------------------------------

WORKFLOW = (ROOT / ".github" / "workflows" / "release.yml").read_text()


def test_the_release_workflow_publishes_only_by_trusted_publishing():
    """No token or password anywhere; id-token: write in the publishing job only; the action that publishes."""
    assert "secrets." not in WORKFLOW and "password" not in WORKFLOW and "PYPI_TOKEN" not in WORKFLOW
    assert WORKFLOW.count("id-token: write") == 1
    publish = WORKFLOW[WORKFLOW.index("\n  publish:\n") : WORKFLOW.index("\n  tag:\n")]
    assert "id-token: write" in publish and "uses: pypa/gh-action-pypi-publish@release/v1" in publish
    assert "\npermissions:\n  contents: read\n" in WORKFLOW  # the default for every other job


def test_the_release_workflow_runs_what_ci_runs():
    """The commands .ci/run and the tests exercise: the plan, build with the planned version, .ci/check-package
    (which checks that version), notes; and only those: the tool has no command the workflow does not run."""
    for command in (
        'python -m tools.release plan --commit "$GITHUB_SHA" --published pypi.json',
        "SETUPTOOLS_SCM_PRETEND_VERSION: ${{ needs.plan.outputs.version }}",
        "python -m build --outdir dist",
        '.ci/check-package --dist dist --version "$VERSION"',
        'python -m tools.release notes --commit "$GITHUB_SHA" --version "$VERSION" > notes.md',
    ):
        assert command in WORKFLOW, command
    assert ".ci/check-package\n" in (ROOT / ".ci" / "run").read_text()
    assert "      - repro/ledger.json\n      - pyproject.toml\n  workflow_dispatch:\n" in WORKFLOW


def test_notes_group_each_change_under_its_own_bug_even_when_one_id_begins_another():
    """Changes come as records (tracker.history.Change): no id is recovered from a printed line."""
    before: dict[str, Any] = {
        "bugs": {"copy": {"fixed_in": None, "regressions": []}, "copy-x": {"fixed_in": None, "regressions": []}},
        "releases": {"2.13.0": {"bugs": {"copy-x": {"dynamic": {"verdict": "present"}}}}},
    }
    after = copy.deepcopy(before)
    after["bugs"]["copy-x"]["fixed_in"] = "2.14.0"
    after["releases"]["2.14.0"] = {"bugs": {"copy-x": {"dynamic": {"verdict": "fixed"}}}}
    assert status_changes(before, after) == {"copy-x": ["fixed_in none -> 2.14.0", "2.14.0: present -> fixed"]}
