"""``python -m repro.run_patched``: usage is exit 2, and --sources overlays only what it names."""

from __future__ import annotations

import shutil

import pytest

from helpers import run
from repro.source_checks import SCRIPT, installed_torch_root

PROG = "python -m repro.run_patched"


@pytest.fixture
def print_source(tmp_path_factory):
    """A script that prints which file ``torch.jit._script`` was loaded from."""
    script = tmp_path_factory.mktemp("script") / "which.py"
    script.write_text("import torch.jit._script as s\nprint(s.__file__)\n")
    return str(script)


def _copy(root, relative: str, *, edit: bool):
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(installed_torch_root() / relative, target)
    if edit:
        target.write_text(target.read_text() + "\n# patched\n")
    return target


@pytest.mark.parametrize("argv", [[], ["no-such-candidate", "-m", "repro"], ["upstream-patch"],
                                  ["--sources"], ["upstream-patch", "-m"]],
                         ids=["nothing", "unknown-candidate", "no-target", "no-dir", "no-module"])
def test_usage_errors_exit_2_like_argparse(argv):
    proc = run(["-m", "repro.run_patched", *argv])
    assert proc.returncode == 2 and proc.stderr.startswith(f"usage: {PROG} ") and "Traceback" not in proc.stderr


@pytest.mark.parametrize("layout", ["empty", "one-level-too-deep", "unchanged-copy"])
def test_sources_with_nothing_to_overlay_are_refused(tmp_path, print_source, layout):
    """A wrong DIR used to run the unpatched torch silently and report 'as the ledger expects'."""
    if layout == "one-level-too-deep":
        _copy(tmp_path, SCRIPT, edit=True)
        tmp_path = tmp_path / "torch"  # DIR/torch given where DIR was meant
    if layout == "unchanged-copy":
        _copy(tmp_path, SCRIPT, edit=False)
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
    patched = _copy(tmp_path, SCRIPT, edit=True)
    proc = run(["-m", "repro.run_patched", "--sources", str(tmp_path), print_source])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(patched)
    assert proc.stderr.strip() == f"{PROG}: torch files from {tmp_path} in place of the installed ones: {SCRIPT}"
