"""The explorer's open findings (docs/findings/): departures nothing explains yet, kept as the scripts
of their smallest cases. Each must still depart on the torch it was found on, say what departs, and
be listed where users read the support table and the explorer's reference."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
import torch

from helpers import ROOT

FINDINGS = sorted((ROOT / "docs" / "findings").glob("*.py"))
FOUND_ON = "2.13.0"  # the release the findings were found on (docs/explorer.md)


def test_there_are_findings_and_each_says_what_departs():
    assert FINDINGS
    for path in FINDINGS:
        said = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        assert "departs" in said.split("\n\n")[0] and "exit" in said, path.name


@pytest.mark.parametrize("path", FINDINGS, ids=lambda path: path.stem)
def test_each_finding_is_listed_in_the_support_table_and_the_explorers_reference(path):
    for page in ("support-table.md", "explorer.md"):
        assert f"docs/findings/{path.name}" in (ROOT / "docs" / page).read_text(encoding="utf-8"), page


def test_no_api_a_finding_departs_in_is_listed_as_working():
    """A finding's ``APIs:`` line keeps each API out of the support table's "works" list, however
    its measured cells read: it departs on models the table does not build."""
    from tracker.support_doc import newest_lists, touched_by_findings

    touched = touched_by_findings()
    assert {"state_dict", "copy.deepcopy"} <= set(touched)
    support = {"cpu": {"rows": {api: {"cell": "ok", "codes": ["ok"]} for api in ("state_dict", "buffers")}}}
    works = newest_lists("2.13.0", support, touched)[2]
    assert "`buffers`" in works and "state_dict" not in works


@pytest.mark.slow
@pytest.mark.skipif(torch.__version__.split("+")[0] != FOUND_ON, reason=f"found on torch {FOUND_ON}")
@pytest.mark.parametrize("path", FINDINGS, ids=lambda path: path.stem)
def test_each_finding_still_departs_with_torch_alone(path):
    shown = subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True, timeout=300)
    assert shown.returncode == 1, shown.stdout[-2000:] + shown.stderr[-2000:]
