"""``repro.bisect``: one harness runs every bug's paste-ready script with `git bisect run`'s exit codes."""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys

import pytest
import torch

from helpers import ROOT, first_quick
from repro import bisect
from repro.catalogue import BUGS

ENTRY = ROOT / "repro" / "full_backward_hook_bug.py"  # the file the project's layout names


def test_one_harness_bisects_every_bug_and_only_the_layouts_file_is_a_script():
    """No reproducer is written twice: ``python -m repro.bisect ID`` is the entry for every bug, and the
    one script left sets the path and hands the original bug's id to the same harness."""
    assert sorted((ROOT / "repro").glob("*_bug.py")) == [ENTRY]
    tree = ast.parse(ENTRY.read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Try))]
    assert len(tree.body) <= 7
    assert f'sys.exit(main(["{next(iter(BUGS))}"]))' in ENTRY.read_text()


@pytest.mark.parametrize("argv", [[], ["full-backward-hook-flg"], ["full-backward-hook-flag", "extra"]])
def test_a_wrong_id_aborts_a_bisection(argv, capsys):
    """128 is neither good, bad nor skip to `git bisect run`: it stops the bisection."""
    assert bisect.main(argv) == bisect.USAGE == 128
    assert "full-backward-hook-flag" in capsys.readouterr().err


def test_a_torch_without_an_api_the_bug_needs_cannot_test(monkeypatch):
    monkeypatch.delattr(torch.nn.Module, "compile")
    code, message = bisect.judge(BUGS["module-compile-noop"])
    assert (code, message) == (125, f"cannot test: torch {torch.__version__} lacks torch.nn.Module.compile")


@pytest.mark.parametrize(
    ("tail", "code", "says"),
    [
        ("raise ValueError('a broken build')", 125, "not the bug's: ValueError: a broken build"),
        ("raise RuntimeError('Could not cast attribute \\'_is_full_backward_hook\\' to type NoneType')", 1, "BUG:"),
        ("assert 1 == 2, 'the hook never ran'", 1, "BUG: the hook never ran"),
        ("x = 1", 0, "OK:"),
    ],
    ids=["another error", "the bug's error", "its assert", "runs to its end"],
)
def test_how_the_script_ends_decides_the_exit_code(tail, code, says):
    bug = dataclasses.replace(BUGS["full-backward-hook-flag"], paste=f"import torch\n{tail}\n")
    got, message = bisect.judge(bug)
    assert got == code and says in message, message


@pytest.mark.parametrize("bug_id", [b.id for b in BUGS.values() if b.fixes.patch.refusal])
def test_a_torch_with_the_bugs_loud_patch_is_still_bad_never_skipped(bug_id):
    """After a loud patch is merged, every commit would otherwise be skipped (125) and a bisection for
    the fix could not end; the patch's refusal is the bug, made clear."""
    words = BUGS[bug_id].fixes.patch.refusal
    bug = dataclasses.replace(BUGS[bug_id], paste=f"import torch\nraise RuntimeError('this Net: {words}.')\n")
    got, message = bisect.judge(bug)
    assert (got, message.split(":")[0]) == (1, "BUG, refused by its upstream patch (loud, not fixed)")


def test_torchscript_switched_off_cannot_test(monkeypatch):
    monkeypatch.setattr(torch.jit, "ScriptModule", torch.nn.Module)
    monkeypatch.setattr(torch.jit, "script_method", lambda fn: fn)
    code, message = bisect.judge(BUGS["deepcopy-drops-subclass"])
    assert code == 125 and "TorchScript is disabled" in message


def test_the_harness_imports_only_the_standard_library_until_it_imports_torch():
    """A PyTorch checkout being bisected has nothing else installed (``-S``: no site-packages at all)."""
    probe = "import sys, repro.bisect; print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    proc = subprocess.run([sys.executable, "-S", "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert set(proc.stdout.split()) - set(sys.stdlib_module_names) == {"__main__", "repro"}


def _fake_torch(tmp_path, body: str) -> dict[str, str]:
    """An environment whose ``import torch`` runs ``body``: a torch package that is not one."""
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(body)
    return {"PYTHONPATH": f"{tmp_path}:{ROOT}"}


@pytest.mark.parametrize(
    ("body", "says"),
    first_quick(
        [
            ("raise SystemExit(0)", "cannot test: import torch failed: SystemExit: 0"),
            ("import sys\nsys.exit()", "cannot test: import torch failed: SystemExit\n"),
            ("raise ImportError('libhccl.so\\x1b[2J\\x07')", "ImportError: libhccl.so\\x1b[2J\\x07"),
        ]
    ),
    ids=["SystemExit(0)", "sys.exit()", "control characters"],
)
def test_a_torch_that_measures_nothing_is_never_good(tmp_path, body, says):
    """Exit 0 tells `git bisect run` "good": a torch whose import exits 0 measured nothing (125), and
    what it says reaches the terminal with its control characters shown, not obeyed."""
    proc = subprocess.run(
        [sys.executable, "-m", "repro.bisect", "full-backward-hook-flag"],
        capture_output=True,
        text=True,
        env=_fake_torch(tmp_path, body),
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 125, proc.stdout + proc.stderr
    assert says in proc.stdout and "\x1b" not in proc.stdout and len(proc.stdout.splitlines()) == 1


@pytest.mark.parametrize("tail", ["raise SystemExit(0)", "import sys\nsys.exit(1)", "raise GeneratorExit"])
def test_a_script_that_leaves_by_another_way_than_the_bugs_verdict_cannot_test(tail):
    bug = dataclasses.replace(BUGS["full-backward-hook-flag"], paste=f"import torch\n{tail}\n")
    code, message = bisect.judge(bug)
    assert code == 125 and message.startswith("cannot test: the script stopped on an error that is not the bug's")


def test_ctrl_c_stops_the_bisection(monkeypatch, capsys):
    """130 is outside 0-127: `git bisect run` stops rather than marking the commit."""
    bug = BUGS["full-backward-hook-flag"]
    monkeypatch.setitem(BUGS, bug.id, dataclasses.replace(bug, paste="import torch\nraise KeyboardInterrupt\n"))
    assert bisect.main([bug.id]) == bisect.INTERRUPTED == 130
    assert capsys.readouterr().err == "interrupted\n"
