"""One ledger reading per pytest session (issue 27, item 5): the controller resolves each bug's expectation
and hands it to the xdist workers, so a ledger rewritten mid-run changes nothing a test is held to, and the
summary says what each test was held to."""

from __future__ import annotations

import json

import pytest

from helpers import A_BUG, ROOT, run

REWRITES_THEN_FAILS_AS_THE_BUG = f"""\
import json, os
import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):  # on a worker, after the controller read the ledger
    path = os.environ["REPRO_LEDGER"]
    data = json.load(open(path))
    for entry in data["releases"].values():
        if "{A_BUG}" in entry.get("bugs", {{}}):
            entry["bugs"]["{A_BUG}"]["dynamic"] = {{"verdict": "fixed", "detail": "rewritten mid-run"}}
    json.dump(data, open(path, "w"))


@pytest.mark.upstream_bug("{A_BUG}")
def test_hook_fires():
    raise RuntimeError(
        "Could not cast attribute '_is_full_backward_hook' to type NoneType: Cannot cast True to None"
    )
"""


@pytest.mark.slow
@pytest.mark.needs_bug(A_BUG)
def test_a_ledger_rewritten_mid_run_changes_nothing_a_test_is_held_to(tmp_path):
    """Before: the worker read the rewritten ledger (must pass: the test failed) while the summary, from the
    controller's reading, said "expected failure"."""
    ledger = tmp_path / "ledger.json"
    ledger.write_bytes((ROOT / "repro" / "ledger.json").read_bytes())
    (tmp_path / "test_rewrite.py").write_text(REWRITES_THEN_FAILS_AS_THE_BUG)
    proc = run(
        ["-m", "pytest", "-n", "1", "-p", "no:cacheprovider", "test_rewrite.py"],
        cwd=tmp_path,
        env={"REPRO_LEDGER": str(ledger)},
        timeout=300,
    )
    out = proc.stdout
    assert proc.returncode == 0 and "1 xfailed" in out, out[-3000:]
    assert "rewritten mid-run" in ledger.read_text()  # the file did change under the run
    summary = out[out.index("upstream bugs: tests whose expectation came from the ledger") :]
    assert f"{A_BUG}: expected failure;" in summary and f"{A_BUG}, expected failure: xfailed" in summary
    assert "must pass" not in summary
    assert json.loads(ledger.read_text())["schema"] == 3


HOSTILE_IDS = f"""\
import pytest


@pytest.mark.upstream_bug("{A_BUG}")
@pytest.mark.parametrize("case", ["\\x1b[2J\\u202eevil"])
def test_hook_fires(case):
    raise RuntimeError(
        "Could not cast attribute '_is_full_backward_hook' to type NoneType: Cannot cast True to None"
    )
"""


@pytest.mark.slow
@pytest.mark.needs_bug(A_BUG)
def test_the_summary_shows_ledger_paths_and_node_ids_inert(tmp_path):
    """Before: the header and the summary wrote the ledger's path and each node id raw (an ESC from a
    parametrize id or a folder name reached the terminal)."""
    folder = tmp_path / "led\x1b[31mger\u202e"
    folder.mkdir()
    ledger = folder / "ledger.json"
    ledger.write_bytes((ROOT / "repro" / "ledger.json").read_bytes())
    (tmp_path / "test_hostile.py").write_text(HOSTILE_IDS)
    proc = run(
        ["-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "test_hostile.py"],
        cwd=tmp_path,
        env={"REPRO_LEDGER": str(ledger)},
        timeout=300,
    )
    out = proc.stdout
    assert proc.returncode == 0 and "1 xfailed" in out, out[-3000:]
    summary = out[out.index("upstream bugs: tests whose expectation came from the ledger") :]
    header = next(line for line in out.splitlines() if line.startswith("upstream bugs: torch"))
    for text in (summary, header):
        assert "\x1b" not in text and "\u202e" not in text, text
    assert "\\x1b[2J\\u202eevil" in summary and "\\x1b[31m" in header + summary
