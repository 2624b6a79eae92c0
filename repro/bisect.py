"""``python -m repro.bisect ID``: run a catalogued bug's paste-ready script with `git bisect run`'s exit codes.

Exit 1: the bug is present (the script ends in its failing ``assert`` or in the bug's own error, or
in its loud upstream patch's refusal: a clear error, still not ``nn.Module``'s behaviour);
0: the script ran to its end, as on ``nn.Module``; 125: cannot test (torch does not import,
TorchScript is off or unusable, this torch lacks an API the bug needs, or the script stopped on
an error that is not the bug's, or on any other way out, ``SystemExit`` included: only the bug's own
verdict may say good or bad); 128: an id the catalogue does not hold, and 130: interrupted (Ctrl-C),
both of which abort a bisection. What torch prints or raises is shown with its control characters
escaped (``repro.sanitise.for_terminal``).

The script is the catalogue's ``Bug.paste``, the same text an issue body shows, so the two cannot
drift. This module, and what it imports, needs only torch and the standard library: a PyTorch
checkout being bisected has nothing else installed.
"""

from __future__ import annotations

import importlib
import linecache
import sys
import textwrap
import traceback
import warnings
from typing import Any

from repro import ctrl_c
from repro.catalogue import BUGS, UnknownBug, get
from repro.catalogue.bug import Bug
from repro.sanitise import for_terminal

PRESENT, ABSENT, CANNOT_TEST, USAGE, INTERRUPTED = 1, 0, 125, 128, 130


def _within(text: str) -> str:
    """A usage line within 100 columns: the catalogue's ids make it long."""
    return "\n".join(textwrap.wrap(text, 100, subsequent_indent="  ", break_on_hyphens=False))


def main(argv: list[str] | None = None) -> int:
    """Print what happened (torch's version first) and return the exit code."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(_within(f"usage: python -m repro.bisect ID  (ID: one of {', '.join(BUGS)})"), file=sys.stderr)
        return USAGE
    try:
        bug = get(args[0])
    except UnknownBug as err:
        print(_within(for_terminal(str(err))), file=sys.stderr)
        return USAGE
    try:
        code, message = judge(bug)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    print(textwrap.fill(for_terminal(message), 100, subsequent_indent="  "))  # a terminal's 100 columns
    return code


def judge(bug: Bug) -> tuple[int, str]:
    """(exit code, one line saying why) for ``bug`` on the torch this process imports."""
    try:
        with ctrl_c.kept():  # torch swallows a Ctrl-C while it loads numpy
            import torch
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # a device backend that fails to autoload; a torch that exits
        return CANNOT_TEST, f"cannot test: import torch failed: {_said(err)}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchScript is deprecated since 2.10
        unusable = _torchscript_problem(torch)
        if unusable:
            return CANNOT_TEST, f"cannot test: TorchScript is unusable: {unusable}"
        print(for_terminal(f"torch {torch.__version__}"))
        missing = [need for need in bug.needs if not _has(need)]
        if missing:
            return CANNOT_TEST, f"cannot test: torch {torch.__version__} lacks {', '.join(missing)}"
        try:
            _run(bug)
        except AssertionError as err:
            return PRESENT, f"BUG: {err}"
        except KeyboardInterrupt:
            raise
        except BaseException as err:  # SystemExit, GeneratorExit ...: never a verdict of the bug's
            text = _said(err)
            if isinstance(err, Exception) and any(fragment in str(err) for fragment in bug.errors):
                return PRESENT, f"BUG: {text}"
            if isinstance(err, Exception) and bug.patch_refused(str(err)):
                return PRESENT, f"BUG, refused by its upstream patch (loud, not fixed): {text}"
            trace = "".join(traceback.format_exception(type(err), err, err.__traceback__))
            print(for_terminal(trace, multiline=True), file=sys.stderr)
            return CANNOT_TEST, f"cannot test: the script stopped on an error that is not the bug's: {text}"
    return ABSENT, f"OK: the script of {bug.id} ran to its end, as on nn.Module"


def _said(err: BaseException) -> str:
    """``Class: first line``: what an exception says, in one line."""
    lines = str(err).splitlines()
    return f"{type(err).__name__}: {lines[0]}" if lines else type(err).__name__


def _torchscript_problem(torch: Any) -> str | None:
    """Why a ScriptModule subclass cannot be built and scripted here (``PYTORCH_JIT=0``, a broken
    TorchScript), or None. The probe is a class of its own: a bug's class keeps its first instance.
    Its ``forward`` carries no comment: TorchScript reads a ``type:`` comment as a signature."""
    try:

        class Probe(torch.jit.ScriptModule):
            @torch.jit.script_method
            def forward(self, x):
                return x

        if "_actual_script_module" not in Probe().__dict__:
            return "TorchScript is disabled (PYTORCH_JIT=0?): ScriptModule is a plain nn.Module"
    except KeyboardInterrupt:
        raise
    except BaseException as err:
        return _said(err)
    return None


def _has(dotted: str) -> bool:
    """Does this torch have ``dotted`` (``torch.nn.Module.compile``)? Its longest importable module
    prefix is imported, the rest looked up as attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except KeyboardInterrupt:
            raise
        except ImportError:
            continue
        except BaseException:  # a module that raises, or exits, on import: this torch cannot serve it
            return False
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def _run(bug: Bug) -> None:
    """Run the paste-ready script as ``__main__``. TorchScript compiles a ``script_method`` from its
    source text, so the text is registered with ``linecache`` under the script's file name."""
    filename = f"<{bug.id}.py>"
    linecache.cache[filename] = (len(bug.paste), None, bug.paste.splitlines(keepends=True), filename)
    try:
        exec(compile(bug.paste, filename, "exec"), {"__name__": "__main__", "__file__": filename})
    finally:
        linecache.cache.pop(filename, None)


if __name__ == "__main__":
    sys.exit(main())
