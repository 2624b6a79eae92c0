"""Plain-text output: the default report (header, the runs grouped by API, scenario and outcome,
details, conclusion), ``--explain`` and ``--candidates``."""

from __future__ import annotations

import textwrap
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence, Set
from typing import TYPE_CHECKING

from repro.catalogue import cause_of, refused_by_patch
from repro.catalogue.bug import Bug
from repro.engine.by_design import (
    BY_DESIGN,
    DESIGNED_DIFFERENCES,
    ByDesign,
    DesignedDifference,
    line_of,
    refusal_line,
)
from repro.engine.oracle import ScenarioResult, Side
from repro.engine.scenarios import TIERS, Scenario
from repro.formats import Material
from repro.report import Report, conclusion
from repro.vocabulary import DEPARTURES, Outcome, ProofStatus, Status, Verdict

if TYPE_CHECKING:  # the filing kit is imported only for --explain and --candidates
    from repro.explore.run import Exploration
    from repro.filing.candidates import CandidateResult
    from repro.proof import Proof

WIDTH = 100  # every line of the report fits a 100-column terminal
RUNS_NOTE = (
    "Under each API, a line per scenario: what its runs gave, and on which runs: model shapes x "
    "ScriptModule styles (script_method: a subclass whose forward is @torch.jit.script_method; "
    "plain_forward: a plain def forward; torch.jit.script: a scripted eager child), each on the first "
    "instance of a fresh class and on a later one. Where its runs differ, or make no whole product of "
    "shapes and styles, a line per outcome and product. "
    "Every run with both twins' observations: --json."
)


def side_cell(side: Side | None) -> str:
    """A short cell: the error type, the number of hook calls, or what was compared when no hook ran."""
    if side is None:
        return "-"
    if side.error:
        return side.error.split(":")[0]
    calls = len(side.observation["hook calls"])
    if calls:
        return f"{calls} hook call{'s' * (calls != 1)}"
    compared = ("gradients" if "grad" in key else key for key in side.observation if key != "hook calls")
    return ", ".join(dict.fromkeys(compared)) or "0 hook calls"


def runs_on(
    runs: Sequence[ScenarioResult], shapes: Sequence[str], styles: Sequence[str], instances: Set[str]
) -> list[str]:
    """Which runs, exactly: products of shapes ("; " between: a shape's name may hold a comma) x styles,
    each with the instance where it held on one of the scenario's ``instances`` only. Every (shape,
    style, instance) a text names gave the outcome, and each run is named once: pairs that do not make
    a whole product, or that gave it on different instances, are separate texts (in shapes' order)."""
    held: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in runs:
        held[(r.scenario.model, r.style)].add(r.instance)
    products: dict[tuple[frozenset[str], tuple[str, ...]], list[str]] = defaultdict(list)
    for shape in shapes:
        for only in dict.fromkeys(frozenset(held[(shape, style)]) for style in styles if (shape, style) in held):
            mine = tuple(style for style in styles if held.get((shape, style)) == only)
            products[(only, mine)].append(shape)
    texts = []
    for (only, mine), named in products.items():
        where = f"{'; '.join(named)} x {_and(list(mine))}"
        texts.append(where if only == instances else f"{where}, {_and(sorted(only))} instance only")
    return texts


def _and(words: list[str]) -> str:
    return ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)


def outcome_lines(report: Report) -> list[str]:
    """The runs grouped under their API, then their scenario, then what they gave: runs that gave the
    same verdict for the same reason are one line, whatever their shape, style and instance."""
    not_judged = {b.bug.id for b in report.bugs if b.status == Status.SKIPPED}  # --bug left them out
    by_api: dict[str, dict[str, list[ScenarioResult]]] = defaultdict(lambda: defaultdict(list))
    for result in report.run.results:
        by_api[result.scenario.api][result.scenario.name].append(result)
    lines: list[str] = []
    for api, scenarios in by_api.items():
        lines.append(api)
        for name, results in scenarios.items():
            shapes = list(dict.fromkeys(r.scenario.model for r in results))
            styles = list(dict.fromkeys(r.style for r in results))
            instances = {r.instance for r in results}
            outcomes: dict[str, list[ScenarioResult]] = defaultdict(list)
            for r in results:
                why = "" if r.verdict == Verdict.MATCH else f" ({_attribution(r, not_judged)})"
                outcomes[f"{r.verdict}{why}"].append(r)
            claims = [
                (outcome, where)
                for outcome, runs in outcomes.items()
                for where in runs_on(runs, shapes, styles, instances)
            ]
            if len(claims) == 1:
                ((outcome, where),) = claims
                lines += _wrap(f"  {name}: {outcome} on {where}", indent=" " * 6)
                continue
            lines.append(f"  {name}:")
            for outcome, where in claims:
                lines += _wrap(f"    {outcome} on {where}", indent=" " * 8)
    return lines


def _wrap(text: str, indent: str = "    ") -> list[str]:
    """Prose (warnings, details, the conclusion) wraps; table rows never do."""
    return textwrap.wrap(text, WIDTH, subsequent_indent=indent, break_on_hyphens=False)


def fit(text: str, width: int = WIDTH) -> str:
    """Every line of ``text`` within ``width`` columns: a longer line wraps, its continuation indented
    four columns past the line's own indent. Blank lines and short lines are kept as they are."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        out += textwrap.wrap(
            line.strip(),
            width,
            initial_indent=indent,
            subsequent_indent=indent + "    ",
            break_on_hyphens=False,
            break_long_words=True,
        )
    return "\n".join(out)


def counted(lines: Iterable[str]) -> list[str]:
    """Identical lines once, in first-seen order, with ``(xN)`` where one was seen N > 1 times."""
    counts = Counter(lines)
    return [line if n == 1 else f"{line} (x{n})" for line, n in counts.items()]


def render(report: Report, material: Material | None = None) -> str:
    """The terminal report (it shows nothing of ``material``: ``--explain`` prints root causes)."""
    env = report.environment
    lines = [
        f"torch {env.torch_version} | Python {env.python_version} | device {env.device} | torch_npu: {env.torch_npu}",
        *(line for w in report.run.warnings for line in _wrap(f"TorchScript warns (shown once): {w}")),
        "",
    ]
    lines += ["Catalogued bugs (python -m repro --list-bugs):", *_bug_lines(report), ""]
    if report.run.results:
        lines += [*_wrap(RUNS_NOTE, indent=""), "", *outcome_lines(report)]
        not_judged = {b.bug.id for b in report.bugs if b.status == Status.SKIPPED}  # --bug left them out
        details = Counter(
            f"{r.verdict} ({_attribution(r, not_judged)}): {r.detail}"
            for r in report.run.results
            if r.verdict in (*DEPARTURES, Verdict.UNAVAILABLE, Verdict.REFUSED)
        )
        if details:
            lines += ["", "Details:"]
            lines += [line for text, n in details.items() for line in _wrap(f"  {text}  (x{n})")]
    if report.completed:
        lines += ["", *_wrap(completed_line(report), indent="")]
    if report.not_run:
        lines += ["", *_wrap(not_run_line(report.not_run), indent="")]
    if report.drift:
        drift = counted(report.drift)  # the same drift seen on both instances is one line, counted
        title = (
            "What the ledger expects, not measured here:"
            if report.outcome == Outcome.CANNOT_TEST and report.run.cannot_test
            else "Drift from the ledger:"
        )
        lines += ["", title, *(line for d in drift for line in _wrap(f"  - {d}"))]
    lines += ["", *_wrap(conclusion(report), indent="")]
    return fit("\n".join(lines))


def not_run_line(scenarios: Iterable[Scenario]) -> str:
    """What the default run left out, counted by tier, and how to run it: nothing goes unmentioned."""
    counts = Counter(s.tier for s in scenarios)
    kinds = ", ".join(f"{n} {TIERS[tier][0]} scenario{'s' * (n != 1)} ({TIERS[tier][1]})" for tier, n in counts.items())
    return f"Not run here, for speed (python -m repro --slow runs them): {kinds}."


def completed_line(report: Report) -> str:
    """Which bugs the default run judged on their whole scope, and why: their default scenarios alone
    disagreed with the ledger, and a status is never concluded from part of a bug's scope."""
    ran = "; ".join(f"{bug_id}: {n} more" for bug_id, n in report.completed)
    return (
        f"Run beyond the default tier, because the default scenarios alone disagreed with the ledger "
        f"and a bug is judged on its whole scope: {ran}."
    )


def _attribution(result: ScenarioResult, not_judged: Collection[str] = ()) -> str:
    """Who answers for a departure: a catalogued bug (one this run does not judge, said so), TorchScript's
    design, or nobody yet."""
    if result.verdict in (Verdict.REFUSED, Verdict.UNAVAILABLE):
        return result.detail.rpartition("(")[2].partition(":")[0] if result.verdict == Verdict.REFUSED else "this torch"
    cause = cause_of(result)
    if cause in not_judged:
        return f"explained by {cause} (not judged here)"
    refuser = refused_by_patch(result)
    return cause or (f"refused by {refuser}'s upstream patch" if refuser else "a departure no catalogued bug explains")


def _bug_lines(report: Report) -> list[str]:
    """One line per bug: its status, and the ledger's expectation where they disagree."""
    width = max(len(b.bug.id) for b in report.bugs)
    lines = []
    for b in report.bugs:
        versus = "" if b.matches_expectation else f"  (ledger: {b.expected.outcome})"
        lines += _wrap(f"  {b.bug.id.ljust(width)}  {b.status}{versus}: {b.detail}", indent=" " * (width + 4))
    return lines


def render_bugs(bugs: Iterable[Bug]) -> str:
    """``--list-bugs``: what the catalogue holds, and where each bug's scripts are."""
    lines = []
    for bug in bugs:
        lines += [
            *_wrap(f"{bug.id}: {bug.title}"),
            *_wrap(f"  upstream: {bug.upstream}; styles: {', '.join(bug.styles)}"),
            *_wrap(f"  APIs: {', '.join(bug.apis)}"),
            *_wrap(f"  symptom: {bug.symptom}"),
            *_wrap(f"  bisect: python -m repro.bisect {bug.id}"),
            *_wrap(f"  workaround: {bug.workaround.summary if bug.workaround else 'none declared'}"),
            *_wrap(f"  fixes: {_fixes(bug)}"),
            "",
        ]
    designed: list[ByDesign | DesignedDifference] = [e for e in BY_DESIGN if e.designed]
    lines.append("By design (not bugs), each with the line of this torch and the source that says so:")
    for entry in [*designed, *DESIGNED_DIFFERENCES]:
        lines += _wrap(f"  {_where(entry)}: {entry.what}. Source: {entry.cite}.")
    lines.append("Refused, undocumented (no PyTorch document or upstream test states it as intended):")
    for refused in (e for e in BY_DESIGN if not e.designed):
        related = f" (related: {refused.related})" if refused.related else ""
        lines += _wrap(f"  {refusal_line(refused)}: {refused.what}{related}")
    return fit("\n".join(lines))


def _fixes(bug: Bug) -> str:
    """What ``--patch`` and ``--candidates`` have for ``bug``."""
    patch = bug.fixes.patch
    kind = {
        "loud": "loud: makes what it cannot fix an error",
        "incomplete": f"incomplete: {patch.leaves}",
    }.get(patch.kind, patch.kind)
    others = ", ".join(c.name for c in bug.fixes.candidates)
    return f"upstream patch ({kind}){'; candidates: ' + others if others else ''} (--patch, --candidates)"


def _where(entry: ByDesign | DesignedDifference) -> str:
    return refusal_line(entry) if isinstance(entry, ByDesign) else line_of(entry.source, entry.marker)


def render_cause(torch_version: str, bug: Bug, steps: list[str]) -> str:
    """``--explain`` for one bug: its cause as numbered steps, each naming the file and line (or the
    C++ file and upstream commit) of its piece, then what users can do today."""
    numbered = [
        line
        for i, step in enumerate(steps, start=1)
        for line in textwrap.wrap(f"{i}. {step}", WIDTH, subsequent_indent="   ", break_on_hyphens=False)
    ]
    return fit("\n".join([f"Root cause of {bug.id} on torch {torch_version}:", *numbered, *_workaround(bug)]))


def _workaround(bug: Bug) -> list[str]:
    """The closing lines: the workaround, or "none" and each alternative tried."""
    found = bug.workaround
    if found is None:
        return ["Workaround: none declared."]
    lines = _wrap(f"Workaround: {found.summary}.", indent="  ")
    if found.apply is not None:
        lines += [line for usage in found.usage.splitlines() for line in _wrap(f"  {usage}", indent="    ")]
    return lines + [line for tried in found.tried for line in _wrap(f"  tried: {tried}", indent="    ")]


def render_explanations(torch_version: str, sections: Iterable[tuple[Bug, list[str]]]) -> str:
    """``--explain`` with several ``--bug``: one section per bug, in the order asked, separated by a
    blank line."""
    return "\n\n".join(render_cause(torch_version, bug, steps) for bug, steps in sections)


PROOF_WORDS = {  # --workarounds' verdict per repro.ledger.WORKAROUND_STATUSES (but "none")
    ProofStatus.WORKS: "works",
    ProofStatus.WORKS_WITH_LIMITS: "works, with limits",
    ProofStatus.DOES_NOT_WORK: "DOES NOT WORK",
    ProofStatus.NOT_MEASURED: "not measured (no run of its scope matched eager here)",
}


def render_proofs(torch_version: str, proofs: list[Proof]) -> str:
    """``--workarounds``: per bug, its workaround, its verdict, what it held on, and where it must not
    be used with what happens there."""
    lines = [
        f"Workarounds on torch {torch_version}, each judged as a fix is, against eager, with it in force "
        f"around each run (holds, loud or silently wrong):"
    ]
    for proof in proofs:
        found = proof.bug.workaround
        if found is None or found.apply is None:
            verdict = f"none ({found.summary.removeprefix('none: ') if found else 'none declared'})"
        else:
            judged = f" ({proof.verdict})" if proof.verdict else ""
            verdict = f"{PROOF_WORDS[proof.status]}{judged}: {found.summary}"
        lines += ["", *_wrap(f"{proof.bug.id}: {verdict}", indent="  "), *_wrap(f"  {proof.summary()}", indent="    ")]
        said = "held on" if found and found.apply is not None else "measured with nothing in force on"
        lines += _wrap(f"  {said}: {proof.space()}", indent="    ")
        if found and proof.within_limits:
            shapes = ", ".join(f"{shape} ({style})" for shape, style in found.limits)
            lines += _wrap(
                f"  do not use it on {shapes}: {proof.within_limits} there ({found.limits_why})", indent="    "
            )
    return fit("\n".join(lines))


def render_candidates(bug: Bug, torch_version: str, device: str, results: list[CandidateResult]) -> str:
    lines = [
        *_wrap(
            f"Candidate fixes for {bug.id} on torch {torch_version}, each put in force and judged by the "
            f"default scenarios and the bug's whole scope, or by every scenario with --slow (device {device}):",
            indent="",
        ),
        "",
    ]
    for r in results:
        lines += [
            *_wrap(f"{r.candidate.name} ({r.candidate.side} side): {r.candidate.summary}"),
            *_wrap(
                f"  the bug's own runs: {r.own_matches}/{r.own_total} match eager; "
                + (f"all judged runs: {r.matches}/{r.total}" if r.complete else "judged no further (not a fix)")
            ),
            *_wrap(f"  verdict: {r.verdict.upper()}: {r.detail}"),
        ]
    lines += [
        "",
        *_wrap(
            "Only a candidate under which every judged scenario run matches eager counts as a fix (runs that "
            "another catalogued bug accounts for, and refusals by design torch makes without the candidate "
            "too, are not judged); 'loud': every run "
            "that still departs raises the candidate's own clear error instead of departing silently; 'hides "
            "the error': the bug's error is gone but runs depart silently. A candidate is judged on the "
            "bug's own runs first; only one that passes them all (or refuses as it says) is judged on the rest.",
            indent="",
        ),
    ]
    return fit("\n".join(lines))


def render_exploration(torch_version: str, exploration: Exploration) -> str:
    """``--explore``: what ran, each departure by what explains it, and every unexplained one (and,
    with a workaround in force, each its bug still explains) as the script of its smallest case.
    Prose wraps at 100 columns; a script is code, written to fit."""
    from repro.explore.classify import Explanation  # --explore only: it needs Hypothesis
    from repro.explore.script import script

    found = sorted(exploration.found.values(), key=lambda f: f.first)
    unexplained = exploration.unexplained()
    rate = exploration.cases / exploration.seconds if exploration.seconds else 0.0
    prose = [
        f"Explored {exploration.cases} generated cases in {exploration.seconds:.0f} s on torch {torch_version} "
        f"({rate:.1f} a second; seed {exploration.seed}, budget {exploration.budget:.0f} s"
        + (f"; models in the reach of {exploration.within}" if exploration.within else "")
        + (f"; the first {exploration.replayed} replayed from --database" if exploration.replayed else "")
        + f"): {len(found)} distinct departures, {len(unexplained)} unexplained.",
    ]
    if exploration.workaround:
        prose += [
            "",
            f"With the workaround {exploration.workaround} in force around every twin's run: "
            f"{exploration.workaround_verdict().value} on {exploration.space()} (a departure the bug "
            "still explains, or nothing explains, is the workaround's).",
        ]
    for explanation in (Explanation.BUG, Explanation.DESIGN, Explanation.UNDOCUMENTED):
        group = [f for f in found if f.finding.explanation is explanation]
        if group:
            reach = " (each on a model in the bug's reach)" if explanation is Explanation.BUG else ""
            prose += ["", f"Explained by {explanation.value}{reach}:"]
        for f in group:
            who = f"{f.finding.cause}: " if f.finding.cause else ""
            prose += [f"  {who}{f.finding.kind.value} at {f.finding.what} (first at case {f.first}, x{f.count})"]
            prose += [f"      {f.finding.detail}"]
    parts = [fit("\n".join(prose))]
    shown = exploration.shown()
    for number, f in enumerate(shown, start=1):
        case, finding = f.example()
        shrunk = "shrunk by Hypothesis" if f.shrunk else "not shrunk within the budget"
        too = "; the same without the workaround, so not its doing" if f.without else ""
        what = "Unexplained" if f.unexplained else f"Still {finding.cause}'s, with its workaround in force,"
        heading = [
            "",
            f"{what} ({number} of {len(shown)}): {finding.kind.value} at {finding.what} "
            f"(first at case {f.first}, x{f.count}; {shrunk}{too}): {finding.detail}",
            "Its script (needs only torch; exits 1 while the departure is there):",
            "",
        ]
        parts += [fit("\n".join(heading)), script(case, finding.step, finding.what).rstrip("\n")]
    return "\n".join(parts) + "\n"


def render_workaround_explorations(
    torch_version: str, explorations: list[Exploration], skipped: Mapping[str, str]
) -> str:
    """``--explore --workarounds``: each workaround's verdict on generated models in its bug's reach,
    why the others were not tried, then the whole exploration of each that does not hold."""
    from repro.vocabulary import WorkaroundVerdict

    prose = [f"Each bug's workaround in force around both twins' runs of generated models (torch {torch_version}):"]
    for exploration in explorations:
        prose += [
            f"- {exploration.within}: {exploration.workaround} {exploration.workaround_verdict().value} "
            f"on {exploration.space()}."
        ]
    by_reason: dict[str, list[str]] = defaultdict(list)
    for bug_id, why in skipped.items():
        by_reason[why].append(bug_id)
    for why, bug_ids in by_reason.items():
        prose += ["", f"Not tried, as the workaround {why}: {', '.join(bug_ids)}."]
    failing = [e for e in explorations if e.workaround_verdict() is not WorkaroundVerdict.HOLDS]
    parts = [fit("\n".join(prose))]
    for exploration in failing:
        parts += ["", render_exploration(torch_version, exploration).rstrip("\n")]
    return "\n".join(parts) + "\n"
