"""``--markdown``: an issue body in the shape of PyTorch's bug template, ready to paste."""

from __future__ import annotations

from repro.filing.explain import RootCause
from repro.filing.material import DOWNSTREAM_TEST, UPSTREAM_ISSUE, Filing
from repro.formats.text import COLUMNS, rows
from repro.report import Report, headline


def _table(report: Report) -> list[str]:
    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return [line(COLUMNS), "|" + "---|" * len(COLUMNS), *(line(row) for row in rows(report))]


def _matching(report: Report) -> str:
    """The APIs this run observed behaving like eager in every scenario: the only ones the body may call working."""
    apis: dict[str, bool] = {}
    for r in report.run.results:
        apis[r.scenario.api] = apis.get(r.scenario.api, True) and r.verdict in ("match", "unavailable")
    working = [f"`{api}`" for api, ok in apis.items() if ok]
    return ", ".join(working) if working else "no hook API"


def render(report: Report, cause: RootCause, filing: Filing) -> str:
    env = report.environment
    lines = [
        "### 🐛 Describe the bug",
        "",
        "On a subclass of `torch.jit.ScriptModule`, `register_full_backward_hook` (and the legacy "
        "`register_backward_hook`) raises `RuntimeError: Could not cast attribute '_is_full_backward_hook' "
        "to type NoneType`. In the run below, "
        f"{_matching(report)} matched an eager `nn.Module` twin in every scenario. "
        f"Previously reported as {UPSTREAM_ISSUE} (closed without a fix); a downstream test asserts the "
        f"error today: {DOWNSTREAM_TEST}.",
        "",
        "Minimal reproducer (torch only; exit 1 = bug present, 0 = fixed, 125 = cannot test):",
        "",
        "```python",
        filing.script_source.rstrip(),
        "```",
        "",
        f"Output on torch {env.torch_version} (exit code {filing.script_exit}):",
        "",
        "```",
        filing.script_output,
        "```",
        "",
        "Traceback:",
        "",
        "```",
        filing.traceback,
        "```",
        "",
        f"Each hook scenario on a ScriptModule subclass versus an eager `nn.Module` twin (device {env.device}; "
        "both `@torch.jit.script_method` and plain `def forward`):",
        "",
        *_table(report),
        "",
        headline(report),
        "",
        "Root cause, as measured on this torch:",
        "",
        *(f"{i}. {step}" for i, step in enumerate(cause.chain(), start=1)),
        "",
        "Candidate fixes, each applied in memory and judged by every scenario above:",
        "",
        "| candidate | side | scenarios matching eager | verdict |",
        "|---|---|---|---|",
        *(f"| {r.candidate.summary} | {r.candidate.side} | {r.matches}/{r.total} | {r.verdict} |"
          for r in filing.candidates),
        "",
        "Proposed fix (the `upstream-patch` candidate), with a regression test:",
        "",
        "```diff",
        filing.patch.rstrip(),
        "```",
        "",
        "### Versions",
        "",
        "```",
        filing.versions.strip(),
        "```",
    ]
    return "\n".join(lines)
