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

FINDINGS = sorted((ROOT / "docs" / "findings").glob("*.py"))  # found on 2.13.0 (docs/explorer.md)
FOUND_ON = "2.13.0"  # the release the findings were found on (docs/explorer.md)
A_FINDING = '''"""Backward through the copy departs from eager's: the copy's gradients stay None.

Found by `python -m repro --explore`; it exits 1 while the departure is there.

APIs: state_dict, load_state_dict.
"""

raise SystemExit(1)
'''


@pytest.mark.parametrize("path", FINDINGS, ids=lambda path: path.stem)
def test_each_finding_says_what_departs(path):
    said = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert "departs" in said.split("\n\n")[0] and "exit" in said, path.name


@pytest.mark.parametrize("path", FINDINGS, ids=lambda path: path.stem)
def test_each_finding_is_listed_in_the_support_table_and_the_explorers_reference(path):
    for page in ("support-table.md", "explorer.md"):
        assert f"docs/findings/{path.name}" in (ROOT / "docs" / page).read_text(encoding="utf-8"), page


def test_a_finding_is_read_with_what_departs_and_the_apis_it_names(tmp_path):
    from tracker.support_doc import findings, findings_section, touched_by_findings

    assert findings(tmp_path) == [] and findings_section(tmp_path) == []  # no finding, no section
    (tmp_path / "copy-grads.py").write_text(A_FINDING, encoding="utf-8")
    said = "Backward through the copy departs from eager's: the copy's gradients stay None."
    assert findings(tmp_path) == [("copy-grads.py", said, ["state_dict", "load_state_dict"])]
    assert touched_by_findings(tmp_path) == {"state_dict": ["copy-grads.py"], "load_state_dict": ["copy-grads.py"]}
    section = "\n".join(findings_section(tmp_path))
    assert "unexplained" in section and "`docs/findings/copy-grads.py`" in section


def test_no_api_a_finding_departs_in_is_listed_as_working(tmp_path):
    """A finding's ``APIs:`` line keeps each API out of the support table's "works" list, however
    its measured cells read: it departs on models the table does not build."""
    from tracker.support_doc import newest_lists, touched_by_findings

    (tmp_path / "copy-grads.py").write_text(A_FINDING, encoding="utf-8")
    support = {"cpu": {"rows": {api: {"cell": "ok", "codes": ["ok"]} for api in ("state_dict", "buffers")}}}
    works = newest_lists("2.13.0", support, touched_by_findings(tmp_path))[2]
    assert "`buffers`" in works and "state_dict" not in works


@pytest.mark.slow
@pytest.mark.skipif(torch.__version__.split("+")[0] != FOUND_ON, reason=f"found on torch {FOUND_ON}")
@pytest.mark.parametrize("path", FINDINGS, ids=lambda path: path.stem)
def test_each_finding_still_departs_with_torch_alone(path):
    shown = subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True, timeout=300)
    assert shown.returncode == 1, shown.stdout[-2000:] + shown.stderr[-2000:]
