"""``python -m tools.release`` fed bad input (issue 27, item 6): every input validated, with bounds, in
one sentence (exit 2); release notes fitted in linear time and written inert."""

from __future__ import annotations

import copy
import subprocess
from typing import Any

import pytest
from markdown_render import live, unseen
from packaging.version import Version
from release_helpers import commit, git

from tools import release
from tools.release import notes


def one_sentence(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err and captured.out == "", captured.err
    return lines[0]


def repo_at(tmp_path, when: str):
    repo = tmp_path / "repo"
    (repo / "repro").mkdir(parents=True)
    git(repo, "init", "-q")
    commit(repo, when, code="0.1.0", data={"schema": 2, "bugs": {}, "releases": {}})
    return repo


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no such file"),
        ("[1, 2]", "no 'releases' object"),
        ('{"releases": {"not a version": []}}', "not a version"),
        ('{"releases": {"0.1.0": ' + "[" * 5000 + "]" * 5000 + "}}", "nested"),
        ('{"releases": {}, "n": 1' + "0" * 5000 + "}", "digits"),
        ("\xff\xfe", "not PyPI's JSON answer"),
    ],
    ids=["missing", "a-list", "bad-key", "deep", "huge-number", "not-utf8"],
)
def test_a_malformed_or_missing_published_file_is_one_sentence(tmp_path, capsys, content, says):
    """Before: a missing file was silently no release at all; deep nesting and huge numbers a traceback."""
    repo = repo_at(tmp_path, "2026-12-03T10:00:00+00:00")
    published = tmp_path / "pypi.json"
    if content is not None:
        published.write_bytes(content.encode("latin-1"))
    assert release.main(["--root", str(repo), "plan", "--published", str(published)]) == 2
    line = one_sentence(capsys)
    assert line.startswith(f"error: --published {published}") and says in line, line


@pytest.mark.parametrize(
    "args",
    [["notes", "--version", "not a version"], ["notes", "--version", "1.0.0-final!"], ["notes"]],
    ids=["notes-version", "not-pep-440", "no-version"],
)
def test_bad_or_missing_versions_are_usage_errors(tmp_path, capsys, args):
    """Before: ``notes --version x`` raised InvalidVersion with a traceback."""
    with pytest.raises(SystemExit) as exit_:
        release.main(["--root", str(tmp_path), *args])
    assert exit_.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]  # argparse: the usage, then one sentence
    assert last.startswith("python -m tools.release ") and ("not a PEP 440 version" in last or "required" in last)


@pytest.mark.parametrize(
    ("when", "says"),
    [("@253402300800 +0000", "has a committer date git shows as"), ("@0 +0000", "is dated 1970-01-01")],
    ids=["year-10000", "1970"],
)
def test_a_commit_with_an_odd_date_is_one_sentence(tmp_path, capsys, when, says):
    """A committer date past 9999 raised ValueError in datetime; one in 1970 made a post-release of 1970."""
    repo = repo_at(tmp_path, when)
    git(repo, "tag", "v0.1.0", when=when)
    commit(repo, when, data={"schema": 2, "bugs": {"bug-a": {"fixed_in": None, "regressions": []}}, "releases": {}})
    assert release.main(["--root", str(repo), "plan"]) == 2
    assert says in one_sentence(capsys)


def many_changes(n: int) -> tuple[dict, dict]:
    bugs: dict = {"bug-a": {"fixed_in": None, "regressions": []}}
    before: dict = {"schema": 2, "bugs": copy.deepcopy(bugs), "releases": {}}
    after: dict = {"schema": 2, "bugs": copy.deepcopy(bugs), "releases": {}}
    for i in range(n):
        before["releases"][f"3.{i}.0"] = {"bugs": {"bug-a": {"dynamic": {"verdict": "present"}}}}
        after["releases"][f"3.{i}.0"] = {"bugs": {"bug-a": {"dynamic": {"verdict": "fixed"}}}}
    return before, after


def test_notes_are_fitted_in_linear_time(monkeypatch):
    """Counted, not timed: each change is put in a code span a bounded number of times. Before, every
    candidate count rebuilt the whole body: n changes cut to a few cost about n * n / 2 spans."""
    spans = []
    original = release.code_span

    def counted(text: str, *rest: Any) -> str:
        spans.append(text)
        return original(text, *rest)

    monkeypatch.setattr(release, "code_span", counted)
    before, after = many_changes(600)
    text = notes(before, after, "0.2.0", "0.1.0", limit=2000)
    assert len(text) <= 2000 and "more changes, left out" in text
    assert len(spans) <= 3 * 600 + 20, len(spans)


def test_notes_render_ledger_ids_and_lines_inert():
    before, after = many_changes(1)
    evil = "evil` ![x](https://e.x/p.png)\n# heading \u202e\udc9b"
    after["bugs"][evil] = {"fixed_in": None, "regressions": []}
    after["releases"]["3.0.0"]["bugs"][evil] = {"dynamic": {"verdict": "fixed"}}  # a release naming it
    text = notes(before, after, "0.2.0", "0.1.0")
    assert live(text, own=("h3", "li")) == [] and unseen(text) == []
    assert "### ``evil`" in text


def test_a_release_naming_a_bug_no_bugs_entry_lists_still_has_notes():
    """Before: StopIteration (a traceback) grouping the change under a bug id ``bugs`` did not list."""
    before, after = many_changes(1)
    before["releases"]["3.0.0"]["bugs"]["bug-z"] = {"dynamic": {"verdict": "present"}}
    after["releases"]["3.0.0"]["bugs"]["bug-z"] = {"dynamic": {"verdict": "fixed"}}
    text = notes(before, after, "0.2.0", "0.1.0")
    assert "### `bug-z`\n- `3.0.0: present -> fixed`" in text


# --- issue 43: stray tags, hostile answers and bytes that are not UTF-8 ------------------------------


def _plan(repo, capsys) -> dict[str, str]:
    assert release.main(["--root", str(repo), "plan"]) == 0
    return dict(line.split("=", 1) for line in capsys.readouterr().out.splitlines())


@pytest.mark.parametrize("stray", ["v1", "v2026.12.03", "v0.2.0"])
def test_a_stray_tag_on_the_commit_is_never_its_version(tmp_path, capsys, stray):
    """Before: ``version=1`` (or ``2026.12.3``), ``release=true``: a release outranking every later one."""
    repo = repo_at(tmp_path, "2026-12-03T10:00:00+00:00")
    git(repo, "tag", stray)
    found = _plan(repo, capsys)
    assert (found["version"], found["release"]) == ("0.1.0", "true"), found
    assert f"the commit's tag v{Version(stray[1:])} ignored: not a version of code-version 0.1.0" in found["reason"]


def test_a_stray_tag_elsewhere_neither_counts_nor_blocks_a_release(tmp_path, capsys):
    repo = repo_at(tmp_path, "2026-12-03T10:00:00+00:00")
    git(repo, "tag", "v2026.12.03")
    commit(repo, "2026-12-04T10:00:00+00:00", readme="later")
    found = _plan(repo, capsys)
    assert (found["version"], found["release"]) == ("0.1.0", "true"), found
    assert "the repository's tag v2026.12.3 ignored: above code-version 0.1.0" in found["reason"]


def test_a_post_release_past_ten_digits_is_refused_in_the_plan(tmp_path, capsys):
    """A published ``.post9999999999`` would make the next one eleven digits, which ``notes`` refuses."""
    repo = repo_at(tmp_path, "2026-12-03T10:00:00+00:00")
    published = tmp_path / "pypi.json"
    published.write_text('{"releases": {"0.1.0": [], "0.1.0.post9999999999": []}}')
    assert release.main(["--root", str(repo), "plan", "--published", str(published)]) == 2
    line = one_sentence(capsys)
    assert "0.1.0.post10000000000, past the scheme's 10-digit suffix" in line, line


def test_a_tag_name_that_is_not_utf8_is_ignored(tmp_path, capsys):
    repo = repo_at(tmp_path, "2026-12-03T10:00:00+00:00")
    subprocess.run([b"git", b"-C", bytes(repo), b"tag", b"v0.1.0\xff"], check=True)
    found = _plan(repo, capsys)
    assert (found["version"], found["release"]) == ("0.1.0", "true"), found


def test_a_pyproject_that_is_not_utf8_at_the_commit_is_one_sentence(tmp_path, capsys):
    repo = repo_at(tmp_path, "2026-12-03T10:00:00+00:00")
    text = (repo / "pyproject.toml").read_bytes()
    (repo / "pyproject.toml").write_bytes(text + "# caf\xe9\n".encode("latin-1"))
    commit(repo, "2026-12-04T10:00:00+00:00")
    assert release.main(["--root", str(repo), "plan"]) == 2
    line = one_sentence(capsys)
    assert line.startswith("error: pyproject.toml at HEAD is not UTF-8"), line


def test_a_tagged_ledger_with_a_number_past_the_digit_limit_is_one_sentence(tmp_path, capsys):
    repo = repo_at(tmp_path, "2026-12-03T10:00:00+00:00")
    git(repo, "tag", "v0.1.0")
    (repo / "repro" / "ledger.json").write_text('{"schema": 2, "bugs": {}, "releases": {}, "n": 1' + "0" * 5000 + "}")
    commit(repo, "2026-12-04T10:00:00+00:00")
    assert release.main(["--root", str(repo), "plan"]) == 2
    line = one_sentence(capsys)
    assert "digits" in line, line


def test_the_notes_of_12000_changes_make_a_version_once_per_release(monkeypatch):
    """Counted, not timed: each status change's "before" was found by sorting every release by version,
    once per change (721,804 ``Version()`` calls for 1,200 changes); they are now sorted once."""
    from tracker import history

    made = []

    class Counted(Version):
        def __init__(self, text: str) -> None:
            made.append(text)
            super().__init__(text)

    monkeypatch.setattr(history, "Version", Counted)
    bugs: dict[str, dict] = {f"bug-{b}": {"fixed_in": None, "regressions": []} for b in range(4)}
    before: dict = {"schema": 2, "bugs": copy.deepcopy(bugs), "releases": {}}
    after: dict = {"schema": 2, "bugs": copy.deepcopy(bugs), "releases": {}}
    for i in range(3000):  # every release new, each of its 4 bugs judged against the release before it
        after["releases"][f"3.{i}.0"] = {
            "bugs": {bug: {"dynamic": {"verdict": "fixed" if i % 2 else "present"}} for bug in bugs}
        }
    changed = release.status_changes(before, after)
    assert sum(map(len, changed.values())) == 4 * 2999 + 0  # each bug flips at every release but the first
    assert len(made) <= 3000, len(made)
