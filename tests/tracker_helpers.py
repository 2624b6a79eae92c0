"""The upstream tracker driven from tests: wheel names and wheels to serve from a loopback index, and
``tracker.check_upstream`` called in this process or run as a subprocess. Shared by the tracker's test
modules, which import from here rather than from one another."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any
from unittest import mock

from index_server import IndexServer, build_pure_wheel

from helpers import A_BUG, flag, run, write_ledger
from tracker import check_upstream

TAG = "cp311-cp311-manylinux_2_28_x86_64"


def wheel_name(version: str, tag: str = TAG) -> str:
    return f"torch-{version}-{tag}.whl"


def check(
    index: IndexServer, tmp_path: Path, *args: str, url: str | None = None, env: dict[str, str] | None = None
) -> tuple[int, Any, Any, str]:
    """``python -m tracker.check_upstream --json ARGS`` against the loopback index, called in this
    process (a subprocess adds half a second of imports; test_runs_as_a_script_and_writes_the_step_summary
    runs it as a script): (exit code, JSON report, ledger, stderr)."""
    ledger = tmp_path / "ledger.json"
    if not ledger.exists():
        write_ledger(ledger)
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.dict(os.environ, {"REPRO_LEDGER": str(ledger), **(env or {})}),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = check_upstream.main(["--index-url", url or index.url, "--json", *args])
        except SystemExit as exit_:  # argparse's usage errors
            code = int(exit_.code or 0)
    report = json.loads(out.getvalue()) if out.getvalue().strip() else None
    return code, report, json.loads(ledger.read_text()), err.getvalue()


def verdicts(report: Any) -> dict[str, str]:
    return {r["version"]: (flag(r).get("static") or {}).get("verdict", "yanked") for r in report["releases"]}


def tracker(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``python -m tracker.check_upstream ARGS`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    environ = {k: v for k, v in os.environ.items() if k not in ("REPRO_LEDGER", "GITHUB_STEP_SUMMARY")}
    with (
        mock.patch.dict(os.environ, {**environ, **(env or {})}, clear=True),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = check_upstream.main(list(args))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


def check_upstream_cli(index_url: str, *args: str, ledger: Path, **run_kwargs: Any) -> subprocess.CompletedProcess:
    """``python -m tracker.check_upstream --index-url INDEX_URL ARGS`` in a subprocess, as a user runs it,
    through ``helpers.run`` (``run_kwargs`` go to it): one place for the argument list those tests share."""
    return run(["-m", "tracker.check_upstream", "--index-url", index_url, *args], ledger=ledger, **run_kwargs)


def packaging_wheel() -> tuple[str, bytes]:
    """The installed packaging, rebuilt as a wheel, so the throwaway environment needs no other index."""
    import packaging

    root = Path(packaging.__file__).parent
    files = {f"packaging/{p.relative_to(root)}": p.read_bytes() for p in root.rglob("*.py")}
    return build_pure_wheel("packaging", packaging.__version__, files)


def spy_torch(
    version: str,
    report: dict | list,
    env_file: Path | None = None,
    tag: str = "py3-none-any",
    argv_file: Path | None = None,
) -> tuple[str, bytes]:
    """A torch whose import writes its environment to ``env_file``, appends the command line it was
    run with to ``argv_file`` (a JSON list a line), and prints ``report`` as the reproducer's."""
    code = "import json, os, sys\n"
    if env_file:
        code += f"json.dump(dict(os.environ), open({str(env_file)!r}, 'w'))\n"
    if argv_file:
        code += f"open({str(argv_file)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
    code += f"sys.stdout.write({json.dumps(report)!r})\nsys.stdout.flush()\nos._exit(0)\n"
    return build_pure_wheel("torch", version, {"torch/__init__.py": code.encode()}, tag)


def reproducer_report(conclusion: str, outcome: str = "present") -> dict:
    """A reproducer report in which the original bug has ``outcome`` as its status; a spy torch prints
    it for every run, so it also reads as the proofs' report (``--workarounds --json``), proving none."""
    return {
        "outcome": outcome,
        "conclusion": conclusion,
        "bugs": [{"id": A_BUG, "status": outcome, "detail": conclusion}],
        "workarounds": [],
    }


def status_change(release: str, before: str, after: str, bug_id: str = A_BUG) -> dict[str, Any]:
    """One status change as ``check_upstream --json`` lists it."""
    return {"bug_id": bug_id, "kind": "status", "release": release, "before": before, "after": after}


def change_lines(report: dict[str, Any]) -> list[str]:
    """A report's status changes as the check prints them."""
    from tracker.history import Change

    return [str(Change.from_json(record)) for record in report["changes"]]
