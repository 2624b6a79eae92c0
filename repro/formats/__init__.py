"""One module per output format, each a set of pure ``render*`` functions returning text.

The report's three formats share one interface, chosen by ``ReportFormat``: ``render(report,
material)``, where ``Material`` holds what a format shows beside the report (each asked bug's
measured root cause; for an issue body, the filing kit's script output, versions and candidates).
The CLI gathers the material and calls ``formats.render``; each module is imported only when chosen.

- ``text``: the terminal report; it also renders the bug list, root causes, proofs and candidate
  verdicts (``render_bugs``, ``render_explanations``, ``render_proofs``, ``render_candidates``).
- ``json``: the report for machines, each asked bug's root cause in its entry;
  ``json.render_proofs(environment, proofs)`` for ``--workarounds --json``.
- ``markdown``: an upstream issue body for the one asked bug.
- ``support_table.render(environment, rows, proofs)``: the per-API support table, from the rows
  ``support_rows`` makes of every scenario run and the ledger's proofs (its own input: not a report).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the filing kit and the report are imported by the modules that use them
    from repro.filing.material import Filing
    from repro.report import Report


class ReportFormat(str, Enum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


@dataclass(frozen=True)
class Material:
    """What a format shows beside the report."""

    causes: Mapping[str, list[str] | None] = field(default_factory=dict)  # bug id -> root cause steps
    filing: Filing | None = None  # --markdown's: the one asked bug's script output, versions, candidates


def render(kind: ReportFormat, report: Report, material: Material) -> str:
    """The report in ``kind``."""
    text: str = importlib.import_module(f"{__name__}.{kind.value}").render(report, material)
    return text
