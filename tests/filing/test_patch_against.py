"""``python -m repro --patch --against CHECKOUT`` on hostile checkouts (issue 20): every file that cannot be
read, decoded or parsed is one sentence and exit 2; line separators other than ``\\n`` stay inside their
line, so the diff still passes ``git apply --check``."""

from __future__ import annotations

import subprocess

import pytest

from helpers import A_BUG, first_quick, run
from repro.catalogue.edits import lines_of
from repro.catalogue.full_backward_hook_flag import BUG
from repro.filing.upstream_patch import unified_diff
from repro.source_checks import RECURSIVE_PY, SCRIPT_PY

TEST_JIT = BUG.fixes.patch.test.runner

BROKEN = {  # file -> (what it becomes, what the one sentence says)
    "test-jit-latin-1": (TEST_JIT, "# caf\xe9\n".encode("latin-1"), "is not UTF-8 text (byte 5 is 0xe9)"),
    "script-py-utf-16": (SCRIPT_PY, "x = 1\n".encode("utf-16"), "is not UTF-8 text"),
    "recursive-syntax-error": (RECURSIVE_PY, b"ignored_attributes = [\n    '_version',\n", "does not parse as Python"),
    "script-py-syntax-error": (SCRIPT_PY, b"class ScriptModule(:\n    pass\n", "does not parse as Python (line 1"),
    "script-py-null-byte": (SCRIPT_PY, b"x = 1\x00\n", "does not parse as Python"),
    "test-jit-a-folder": (TEST_JIT, None, "is not a PyTorch checkout: it lacks test/test_jit.py"),
}


@pytest.mark.parametrize("case", first_quick(BROKEN), ids=BROKEN.keys())
def test_a_checkout_file_that_cannot_be_read_or_parsed_is_one_sentence(checkout, case):
    path, content, said = BROKEN[case]
    target = checkout / path
    target.unlink()
    if content is None:
        target.mkdir()
    else:
        target.write_bytes(content)
    proc = run(["-m", "repro", "--patch", "--bug", A_BUG, "--against", str(checkout)])
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and said in proc.stderr, proc.stderr


SEPARATORS = {
    "form-feed": "\x0c",
    "file-separator": "\x1c",
    "next-line": "\x85",
    "line-separator": "\u2028",
    "vertical-tab": "\x0b",
}


@pytest.mark.needs_bug(A_BUG)  # the installed files must still lack the fix for the patch to add it
@pytest.mark.parametrize("separator", first_quick(SEPARATORS.values()), ids=SEPARATORS.keys())
def test_separators_other_than_newline_survive_and_git_apply_accepts_the_diff(checkout, separator):
    # In a comment, and a form feed alone on a line too, as between the sections of PyTorch's own files.
    prefix = f"# section one{separator} still one\n" + ("\x0c\n" if separator == "\x0c" else "") + "# two\n"
    for path in (TEST_JIT, SCRIPT_PY, RECURSIVE_PY):
        (checkout / path).write_text(prefix + (checkout / path).read_text())
    proc = run(["-m", "repro", "--patch", "--bug", A_BUG, "--against", str(checkout)])
    assert proc.returncode == 0, proc.stderr
    check = subprocess.run(
        ["git", "apply", "--check", "-"], cwd=checkout, input=proc.stdout, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
    subprocess.run(["git", "apply", "-"], cwd=checkout, input=proc.stdout, text=True, check=True)
    for path in (TEST_JIT, SCRIPT_PY, RECURSIVE_PY):
        assert (checkout / path).read_text().startswith(prefix)


@pytest.mark.parametrize("text", ["a\x0cb\nc\n", "a\nb", "", "\n", "a\r\nb\u2028c\n"])
def test_lines_are_split_on_newline_alone(text):
    assert "".join(lines_of(text)) == text
    assert [line for line in lines_of(text) if line.count("\n") > 1] == []
    assert len(lines_of(text)) == text.count("\n") + (not text.endswith("\n") and text != "")


def test_a_last_line_without_a_newline_is_marked_as_git_marks_it(tmp_path):
    diff = unified_diff({"f.txt": "a\nb"}, {"f.txt": "a\nc"})
    assert diff.endswith("+c\n\\ No newline at end of file\n")
    (tmp_path / "f.txt").write_text("a\nb")
    check = subprocess.run(["git", "apply", "--check", "-"], cwd=tmp_path, input=diff, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
