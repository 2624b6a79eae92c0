"""The report's formats share one interface, chosen by ``ReportFormat`` (issue 44, item 4)."""

from __future__ import annotations

import json

import pytest
from results import report_of, result

from helpers import A_BUG
from repro.catalogue import get
from repro.filing.material import Filing
from repro.formats import Material, ReportFormat, render

SCENARIO = "register_full_backward_hook: called with grad_input and grad_output"
CAUSE = ["the flag is an attribute TorchScript cannot cast", "it is set by plain assignment"]


def _report():
    return report_of([result(SCENARIO, "plain_forward", "raises", "RuntimeError: Could not cast attribute")])


@pytest.mark.parametrize("kind", list(ReportFormat), ids=[kind.value for kind in ReportFormat])
def test_each_format_renders_the_report_and_the_material_it_shows(kind):
    filing = Filing(get(A_BUG), "Traceback: RuntimeError", 1, "collect_env output", "")
    shown = render(kind, _report(), Material({A_BUG: CAUSE}, filing))
    assert SCENARIO.split(":")[0] in shown
    if kind == ReportFormat.JSON:
        entry = next(bug for bug in json.loads(shown)["bugs"] if bug["id"] == A_BUG)
        assert entry["root_cause"] == CAUSE
    if kind == ReportFormat.MARKDOWN:
        assert all(step in shown for step in CAUSE) and "Traceback: RuntimeError" in shown


def test_an_issue_body_without_the_filing_kits_material_is_one_sentence():
    with pytest.raises(ValueError, match="needs the filing kit's material"):
        render(ReportFormat.MARKDOWN, _report(), Material({A_BUG: CAUSE}))
