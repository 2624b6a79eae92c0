"""``--markdown [--bug ID]``: an issue body in the shape of PyTorch's bug template, ready to paste.

Written for a PyTorch maintainer: the bug's paste-ready script and what it printed in a fresh
interpreter, one summary row per hook API the bug affects, the root cause where the catalogue knows
it, and, collapsed, every scenario run, the patch and the versions. It names only tools the reader
has (torch), but for one closing line saying where the body came from. What torch printed or raised
and what its sources hold is outside text: in fences longer than any backtick run inside, or escaped.
"""

from __future__ import annotations

from collections import Counter

from repro.catalogue import cause_of
from repro.catalogue.bug import Bug
from repro.engine.oracle import ScenarioResult
from repro.filing.material import Filing
from repro.formats import Material
from repro.formats.text import side_cell
from repro.report import Report
from repro.sanitise import code_block, code_names, plain
from repro.source_checks import installed_sources
from repro.vocabulary import FixVerdict, Verdict

ATTRIBUTION = "Found and measured with scriptmodule-hook-repro (`python -m repro --markdown`)."


def _cells(cells: tuple[str, ...]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _details(summary: str, body: list[str]) -> list[str]:
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]


RUN_COLUMNS = ("hook API", "scenario", "style", "instance", "ScriptModule", "eager", "verdict")


def _run_row(r: ScenarioResult) -> str:
    return _cells(
        (
            code_names(r.scenario.api),
            code_names(r.scenario.name),
            r.style,
            r.instance,
            plain(side_cell(r.scripted)),
            plain(side_cell(r.eager)),
            r.verdict,
        )
    )


def _summary(report: Report, bug: Bug) -> list[str]:
    """One row per API the bug affects, counting only the runs in its scope (its styles, shapes and
    cases): those that match eager, those that show this bug, and those another bug or TorchScript's
    design accounts for."""
    counts: dict[str, Counter] = {api: Counter() for api in bug.apis}
    for r in report.run.results:
        if r.scenario.api in counts and bug.covers(r):
            cause = cause_of(r)
            kind = "match" if r.verdict == Verdict.MATCH else "this bug" if cause == bug.id else "otherwise"
            counts[r.scenario.api][kind] += 1
    lines = [
        "| API (runs in this bug's scope) | scenario runs | match eager | show this bug | depart otherwise |",
        "|---|---|---|---|---|",
    ]
    lines += [
        _cells((f"`{api}`", str(sum(c.values())), str(c["match"]), str(c["this bug"]), str(c["otherwise"])))
        for api, c in counts.items()
        if c
    ]
    return lines


def _scope(bug: Bug) -> str:
    """The styles and model shapes a bug affects, in words."""
    styles = {
        "script_method": "`@torch.jit.script_method`",
        "plain_forward": "plain `def forward`",
        "torch.jit.script": "a `torch.jit.script`-ed child",
    }
    return f"{' and '.join(styles.get(s, s) for s in bug.styles)}; model shapes: {code_names('; '.join(bug.models))}"


def _matching(report: Report) -> str:
    """The APIs this run observed behaving like eager in every scenario: the only ones the body may call working."""
    apis: dict[str, bool] = {}
    for r in report.run.results:
        apis[r.scenario.api] = apis.get(r.scenario.api, True) and r.verdict in (Verdict.MATCH, Verdict.UNAVAILABLE)
    working = [f"`{api}`" for api, ok in apis.items() if ok]
    return ", ".join(working) if working else "no hook API"


def _root_cause(bug: Bug, cause: list[str]) -> list[str]:
    """The numbered steps, then the workaround users have until a fix (or "none" and why)."""
    found = bug.workaround
    if found is None or found.apply is None:
        today = f"none ({code_names(found.summary.removeprefix('none: ')) if found else 'none declared'})."
    else:
        today = f"{code_names(found.in_torch_terms or found.summary)}."
    return [*(f"{i}. {plain(step)}" for i, step in enumerate(cause, start=1)), "", f"Workaround until a fix: {today}"]


def _candidates(report: Report, filing: Filing) -> list[str]:
    """Collapsed (the body stays short), its summary naming each candidate's verdict."""
    if not filing.candidates:
        return []
    table = [
        "Each candidate put in force and judged by the default tier's scenario runs and the bug's whole "
        "scope, leaving out runs another catalogued bug accounts for and refusals by design that torch makes "
        "without the candidate too (one that fails "
        "on the bug's own runs, judged first, is judged no further):",
        "",
        "| candidate | side | scenario runs matching eager | verdict |",
        "|---|---|---|---|",
        *(
            _cells((code_names(r.candidate.summary.split(" (")[0]), r.candidate.side, r.tally(), r.verdict))
            for r in filing.candidates
        ),
    ]
    fixes = filing.bug.fixes
    loud = [r for r in filing.candidates if r.candidate.name == "upstream-patch" and r.verdict == FixVerdict.LOUD]
    if fixes.patch.cpp and loud and not any(r.verdict == FixVerdict.FIX for r in filing.candidates):
        matching = f"{loud[0].own_matches} of {loud[0].own_total}"
        table += [
            "",
            f"No candidate here matches eager: the cause is in C++ ({plain(fixes.patch.cpp)}), which no change to "
            f"torch's Python files reaches. Under the proposed patch {matching} of the bug's own runs match eager, "
            "and every other one raises the patch's clear error instead of departing.",
        ]
    verdicts = ", ".join(f"{r.candidate.name}: {r.verdict}" for r in filing.candidates)
    return _details(f"Candidate fixes in torch ({verdicts})", table)


def render(report: Report, material: Material) -> str:
    """The issue body of ``material.filing``'s bug; its root cause as steps is ``material.causes``'
    (``repro.catalogue.steps``); None: not measured, its static signature's evidence stands in
    (file:line each)."""
    filing = material.filing
    if filing is None:
        raise ValueError("an issue body needs the filing kit's material (--markdown gathers it)")
    bug, env = filing.bug, report.environment
    cause = material.causes.get(bug.id)
    reference = bug.reported or "Not reported before, as far as we know."
    lines = [
        "### 🐛 Describe the bug",
        "",
        f"{code_names(bug.title)}: {code_names(bug.symptom)}. {reference}",
        "",
        "```python",
        bug.paste.rstrip(),
        "```",
        "",
        f"Output of exactly this script on torch {env.torch_version} (exit code {filing.exit_code}):",
        "",
        code_block(filing.output),
        "",
        f"Each API this bug affects, on a ScriptModule subclass ({_scope(bug)}; first and later instances) "
        f"versus an eager `nn.Module` twin, device {env.device}:",
        "",
        *_summary(report, bug),
        "",
        f"In the same run, {_matching(report)} matched the eager twin in every scenario.",
        "",
        "Root cause, as measured on this torch:",  # a list may follow a paragraph line directly
        *_root_cause(bug, cause if cause is not None else bug.static(installed_sources()).evidence),
        "",  # the collapsed parts follow one another: the body a reader sees stays short
        *_candidates(report, filing),
        *_details(
            f"All {len(report.run.results)} scenario runs, one row each",
            [_cells(RUN_COLUMNS), "|" + "---|" * len(RUN_COLUMNS), *(_run_row(r) for r in report.run.results)],
        ),
    ]
    if filing.patch:
        leaves = bug.fixes.patch.leaves
        lines += _details(
            f"Proposed patch, incomplete: {plain(leaves)}; against the installed release, with a regression test"
            if leaves
            else "Proposed fix, against the installed release, with a regression test",
            [code_block(filing.patch.rstrip(), "diff")],
        )
    lines += ["", ATTRIBUTION, "", "### Versions", "", *_details("collect_env", [code_block(filing.versions.strip())])]
    return "\n".join(lines)
