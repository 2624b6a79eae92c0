"""``python -m repro.run_patched``: usage is exit 2, and --sources overlays only what it names."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from helpers import A_BUG, first_quick, run
from repro.source_checks import SCRIPT_PY, installed_torch_root

PROG = "python -m repro.run_patched"


@pytest.fixture
def print_source(tmp_path_factory):
    """A script that prints whether ``torch.jit._script`` was loaded from a patched file (``_copy`` marks
    it), and under which file name it was compiled (the installed one, either way)."""
    script = tmp_path_factory.mktemp("script") / "which.py"
    script.write_text(
        "import torch.jit._script as s\n"
        "patched = s.__spec__.loader.get_source(s.__name__).endswith('# patched\\n')\n"
        "print('patched' if patched else 'installed', s.__file__)\n"
    )
    return str(script)


def _copy(root, relative: str, *, edit: bool):
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(installed_torch_root() / relative, target)
    if edit:
        target.write_text(target.read_text() + "\n# patched\n")
    return target


@pytest.mark.parametrize(
    "argv",
    first_quick(
        [
            [],
            [f"{A_BUG}:no-such-candidate", "-m", "repro"],
            ["upstream-patch", "-m", "repro"],
            [f"{A_BUG}:upstream-patch"],
            ["--sources"],
            [f"{A_BUG}:upstream-patch", "-m"],
        ]
    ),
    ids=["nothing", "unknown-candidate", "no-bug-named", "no-target", "no-dir", "no-module"],
)
def test_usage_errors_exit_2_like_argparse(argv):
    proc = run(["-m", "repro.run_patched", *argv])
    assert proc.returncode == 2 and proc.stderr.startswith(f"usage: {PROG} ") and "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]  # what it did not understand, named (argparse's shape)
    assert last.startswith(f"{PROG}: error: ") and max(len(line) for line in proc.stderr.splitlines()) <= 100
    assert "no-such" not in " ".join(argv) or "no candidate 'no-such-candidate' (see --help)" in last
    assert argv[:1] != ["upstream-patch"] or "'upstream-patch' names no bug: write BUG:NAME (see --help)" in last


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_the_usage_and_the_candidates_exit_0(flag, capsys):
    """Before: ``--help`` was "neither a candidate nor --sources DIR", exit 2."""
    from repro import run_patched
    from repro.filing.candidates import specs

    with pytest.raises(SystemExit) as exit_:
        run_patched.main([flag])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and out.startswith(f"usage: {PROG} ")
    assert [spec for spec in specs() if f"\n  {spec}\n" not in out + "\n"] == [], out
    assert "--sources DIR" in out
    assert max(len(line) for line in out.splitlines()) <= 100


@pytest.mark.parametrize("layout", ["empty", "one-level-too-deep", "unchanged-copy"])
def test_sources_with_nothing_to_overlay_are_refused(tmp_path, print_source, layout):
    """A wrong DIR used to run the unpatched torch silently and report 'as the ledger expects'."""
    if layout == "one-level-too-deep":
        _copy(tmp_path, SCRIPT_PY, edit=True)
        tmp_path = tmp_path / "torch"  # DIR/torch given where DIR was meant
    if layout == "unchanged-copy":
        _copy(tmp_path, SCRIPT_PY, edit=False)
    proc = run(["-m", "repro.run_patched", "--sources", str(tmp_path), print_source])
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"{PROG}: error: {tmp_path} holds no torch/**/*.py that differs")
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_sources_overlay_only_the_changed_files_and_name_them(tmp_path, print_source):
    """A whole copy of torch's Python files once moved torch's own modules away from its binaries."""
    root = installed_torch_root()
    for path in root.glob("torch/**/*.py"):
        target = tmp_path / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    _copy(tmp_path, SCRIPT_PY, edit=True)
    proc = run(["-m", "repro.run_patched", "--sources", str(tmp_path), print_source])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"patched {installed_torch_root() / SCRIPT_PY}"  # compiled under torch's name
    assert proc.stderr.strip() == f"{PROG}: torch files from {tmp_path} in place of the installed ones: {SCRIPT_PY}"


# --- what DIR holds: links followed, anything but a regular file named (issue 20) ---------------


def _unusable(root, kind: str):
    """``root/torch/jit/_script.py`` made into something that is not a regular file."""
    target = root / SCRIPT_PY
    target.parent.mkdir(parents=True, exist_ok=True)
    if kind == "a directory":
        target.mkdir()
    elif kind == "a dangling symbolic link":
        target.symlink_to(root / "nowhere.py")
    elif kind == "a FIFO":
        os.mkfifo(target)
    elif kind == "a character device":
        target.symlink_to(os.devnull)
    elif kind == "a directory (linked)":
        (root / "elsewhere").mkdir()
        target.symlink_to(root / "elsewhere")
    return target


@pytest.mark.parametrize(
    "kind",
    first_quick(["a directory", "a dangling symbolic link", "a FIFO", "a character device", "a directory (linked)"]),
)
def test_a_source_that_is_not_a_regular_file_is_named_in_one_sentence(tmp_path, print_source, kind):
    target = _unusable(tmp_path, kind)
    _copy(tmp_path, "torch/jit/_recursive.py", edit=True)  # a good file beside it changes nothing
    proc = run(["-m", "repro.run_patched", "--sources", str(tmp_path), print_source], timeout=60)  # a FIFO never blocks
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines() == [
        f"{PROG}: error: {target} is {kind.split(' (')[0]}: not a regular file, so it cannot stand in for torch's"
    ]


@pytest.mark.parametrize("link", ["torch/jit", "torch", SCRIPT_PY])
def test_symbolic_links_are_followed_to_files_and_folders(tmp_path, link):
    from repro.filing.source_import import overlay_files

    real, tree = tmp_path / "real", tmp_path / "tree"
    patched = _copy(real, SCRIPT_PY, edit=True)
    (tree / link).parent.mkdir(parents=True, exist_ok=True)
    (tree / link).symlink_to(real / link)
    (real / "torch" / "jit" / "loop").symlink_to(real / "torch")  # a link back up the tree is walked once
    files = overlay_files(tree)
    assert list(files) == ["torch.jit._script"] and files["torch.jit._script"] == tree / SCRIPT_PY
    assert files["torch.jit._script"].read_text() == patched.read_text()


@pytest.mark.slow  # a fresh interpreter that imports torch
def test_a_torch_jit_linked_to_a_folder_of_patched_files_is_served(tmp_path, print_source):
    real = tmp_path / "patched-jit"
    _copy(tmp_path / "staging", SCRIPT_PY, edit=True).parent.rename(real)
    (tmp_path / "tree" / "torch").mkdir(parents=True)
    (tmp_path / "tree" / "torch" / "jit").symlink_to(real)
    proc = run(["-m", "repro.run_patched", "--sources", str(tmp_path / "tree"), print_source])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"patched {installed_torch_root() / SCRIPT_PY}"
    assert proc.stderr.strip().endswith(f"in place of the installed ones: {SCRIPT_PY}")


@pytest.mark.slow  # builds a virtual environment
def test_no_torch_installed_is_one_sentence(tmp_path):
    """An interpreter without torch (a venv not set up): a FileNotFoundError traceback before."""
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    for argv in (["upstream-patch", "-m", "repro"], ["--sources", str(tmp_path), "-m", "repro"]):
        proc = run(["-m", "repro.run_patched", *argv], python=str(bare / "bin" / "python"))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.splitlines() == [
            f"{PROG}: error: torch is not installed for {bare}/bin/python: nothing to patch"
        ]


@pytest.mark.slow  # a fresh interpreter that imports torch
@pytest.mark.parametrize(
    "spoil",
    [
        lambda text: text + "\n<<<<<<< HEAD\n",  # a merge left half done
        lambda text: "# -*- coding: latin-1 -*-\nx = '\xe9'\n" + text,  # valid Python, but not UTF-8
    ],
    ids=["conflict-marker", "coding-line"],
)
def test_a_patched_tree_whose_files_do_not_import_is_one_sentence_or_runs(tmp_path, print_source, spoil):
    target = _copy(tmp_path, SCRIPT_PY, edit=True)
    target.write_bytes(spoil(target.read_text()).encode("latin-1"))
    proc = run(["-m", "repro.run_patched", "--sources", str(tmp_path), print_source], timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    if "coding" in target.read_text(encoding="latin-1").splitlines()[0]:  # Python honours the coding line
        assert proc.returncode == 0 and proc.stdout.startswith("patched "), proc.stderr
    else:
        assert proc.returncode == 2 and proc.stderr.splitlines()[-1].startswith(
            f"{PROG}: error: with the files from {tmp_path}, torch cannot be imported: SyntaxError"
        ), proc.stderr


def test_a_source_that_cannot_be_read_is_named_in_one_sentence(tmp_path, monkeypatch):
    """As root every file reads, so the refusal is made for real by a read that fails."""
    from pathlib import Path

    from repro.filing import source_import

    target = _copy(tmp_path, SCRIPT_PY, edit=True)
    read = Path.read_bytes

    def refused(path: Path) -> bytes:
        if path == target:
            raise PermissionError(13, "Permission denied")
        return read(path)

    monkeypatch.setattr(Path, "read_bytes", refused)
    with pytest.raises(source_import.UnusableSource, match="cannot be read \\(Permission denied\\), so it cannot"):
        source_import.overlay_files(tmp_path)
