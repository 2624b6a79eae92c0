"""``python -m repro``: wire environment -> oracle -> report -> format, and pick the exit code.

Exit codes: 0 every observation matches the ledger's expectation for this torch (and
--explain, --candidates, --patch succeeded); 1 drift (printed); 2 usage or environment
error, or TorchScript cannot be exercised here.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repro.catalogue import UnknownBug, get
from repro.catalogue.bug import Bug
from repro.engine import forked
from repro.environment import DEVICE_CHOICES, Environment, EnvironmentProblem, resolve_environment
from repro.ledger import Expectation, LedgerError, expectation_for, ledger_path, load, release_key
from repro.output import answered, emit, native_output_to_stderr, parsed
from repro.requirements import unmet
from repro.sanitise import for_terminal
from repro.vocabulary import Outcome, ProofStatus, WorkaroundVerdict

if TYPE_CHECKING:  # the filing kit is imported only when asked for
    from repro.filing.material import Filing, HeadStart
    from repro.report import Report

EXIT_OK, EXIT_DRIFT, EXIT_ENVIRONMENT = 0, 1, 2
PROG = "python -m repro"
BUDGET = 60.0  # --explore's seconds, where --budget does not say


def shown(report: str) -> str:
    """A text report for the terminal: what torch said in it (errors, its sources) cannot drive the terminal."""
    return for_terminal(report, multiline=True)


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Show which hook APIs of a torch.jit.ScriptModule subclass behave like "
        "an eager nn.Module on the installed torch, and compare with the ledger.",
        epilog="Exit codes: 0 as the ledger expects, 1 drift, 2 usage or environment error, 130 Ctrl-C. "
        "REPRO_LEDGER=/path reads another ledger.",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--json", action="store_true", help="print one JSON object")
    mode.add_argument("--markdown", action="store_true", help="print a ready-to-file issue body (of the one --bug)")
    mode.add_argument("--explain", action="store_true", help="print the root causes measured here (--bug's, or all)")
    mode.add_argument(
        "--candidates",
        action="store_true",
        help="judge each candidate fix of one bug (--bug) by its scenarios with it applied",
    )
    mode.add_argument(
        "--patch",
        action="store_true",
        help="print one bug's proposed upstream diff (with a regression test) for this torch (--bug as above)",
    )
    mode.add_argument("--list-bugs", action="store_true", help="list the catalogued bugs and exit")
    parser.add_argument(
        "--workarounds",
        action="store_true",
        help="prove each bug's workaround here: run its whole scope with it in force against eager "
        "(exit 1 when one does not work; with --json: one object per bug)",
    )
    parser.add_argument(
        "--support-table",
        action="store_true",
        help="print, for every API of nn.Module, how a ScriptModule subclass behaves next to it "
        "(runs every scenario; with --json: its rows as JSON)",
    )
    parser.add_argument(
        "--explore",
        action="store_true",
        help="generate models (Hypothesis) and compare each ScriptModule twin with its eager twin for "
        "--budget seconds; print each unexplained departure as a script (exit 1 when there is one)",
    )
    parser.add_argument(
        "--budget", type=_seconds, metavar="SECONDS", help=f"with --explore: how long (default {BUDGET:.0f})"
    )
    parser.add_argument(
        "--seed", type=_seed, metavar="N", help="with --explore: the same seed is the same run (default 0)"
    )
    parser.add_argument(
        "--database",
        type=Path,
        metavar="DIR",
        help="with --explore: replay the departing cases this folder keeps first, then keep this run's "
        "(a Hypothesis example database)",
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="PYTORCH_CHECKOUT",
        help="with --patch: make the diff against that checkout and register the test there",
    )
    parser.add_argument(
        "--device",
        choices=DEVICE_CHOICES,
        default="auto",
        help="where to run (default: the accelerator if present, else cpu)",
    )
    parser.add_argument(
        "--bug",
        action="append",
        default=[],
        metavar="ID",
        help="run only this catalogued bug's scenarios (repeatable; see --list-bugs)",
    )
    parser.add_argument(
        "--slow",
        action="store_true",
        help="run every scenario: the default run leaves out, for speed, variants of its "
        "scenarios and those that take seconds (Module.compile and checkpointing load dynamo)",
    )
    return parser


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 1 <= value <= 86400:
        raise argparse.ArgumentTypeError(f"a number of seconds from 1 to 86400, not {text[:20]!r}")
    return value


def _seed(text: str) -> int:
    if not text.isdigit() or int(text) >= 2**32:
        raise argparse.ArgumentTypeError(f"a whole number from 0 to 2**32 - 1, not {text[:20]!r}")
    return int(text)


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """Ctrl-C is one line and exit 130, as for any Unix tool; no process this one started outlives it."""
    previous = sys.unraisablehook
    sys.unraisablehook = partial(_redeliver_ctrl_c, previous)
    try:
        return answered(partial(_main, argv, prog), prog)
    finally:
        sys.unraisablehook = previous


def _redeliver_ctrl_c(previous: Callable[[Any], object], unraisable: Any) -> None:
    """Ctrl-C that lands in a finalizer or weakref callback (torch runs many) is printed and dropped by
    Python, and the run goes on: deliver it again, to land in the run itself."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):  # 50 ms later, from another thread: a
        # signal sent before this hook returns would be handled in it, and dropped again
        timer = threading.Timer(0.05, os.kill, args=(os.getpid(), signal.SIGINT))
        timer.daemon = True
        timer.start()
        return
    previous(unraisable)


def _main(argv: list[str] | None, prog: str) -> int:
    args = parsed(build_parser(prog), argv)  # argparse exits with 2 on bad usage

    def fail(problem: object) -> int:
        print(for_terminal(f"{prog}: error: {problem}"), file=sys.stderr)
        return EXIT_ENVIRONMENT

    if args.against and not args.patch:
        return fail("--against is for --patch")
    unusable = forked.setting_problem()
    if unusable:
        return fail(unusable)
    try:
        asked = [get(bug_id).id for bug_id in args.bug]  # an unknown id is one sentence, whatever the mode
    except UnknownBug as problem:
        return fail(problem)
    one = "--markdown" if args.markdown else "--patch" if args.patch else "--candidates" if args.candidates else ""
    if one and len(asked) != 1:  # no bug is the default: the first catalogued is not special
        return fail(f"{one} is about one bug: name it with one --bug ID (see --list-bugs)")
    if args.support_table and (
        args.markdown or args.explain or args.candidates or args.patch or args.list_bugs or args.bug or args.slow
    ):
        return fail("--support-table runs every scenario: it takes only --json and --device")
    if args.workarounds and (args.markdown or args.explain or args.candidates or args.patch or args.list_bugs):
        return fail("--workarounds takes only --json, --bug and --device")
    if not args.explore and (args.budget is not None or args.seed is not None or args.database is not None):
        return fail("--budget, --seed and --database are for --explore")
    if (
        args.explore
        and (args.markdown or args.explain or args.candidates or args.patch or args.list_bugs or args.slow)
        or (args.explore and (args.support_table or len(asked) > 1))
    ):
        return fail("--explore takes only --budget, --seed, --database, one --bug, --workarounds, --json and --device")
    if args.database is not None and not _writable_folder(args.database):
        return fail(f"--database {for_terminal(str(args.database))} is not a folder this user can write")
    if args.explore:
        missing = unmet(("hypothesis",), "pip install -e '.[explore]'")
        if missing:
            return fail(missing)
    if args.patch:
        return _patch(get(asked[0]), fail, args.against)
    try:
        ledger = {} if args.list_bugs else load(ledger_path())  # before importing torch: bad input fails fast
        started = _head_start(args)
    except (LedgerError, UnknownBug) as problem:
        return fail(problem)
    try:
        with native_output_to_stderr():
            return _run(args, ledger, started, fail)
    finally:
        if started:
            started.stop()


def _writable_folder(path: Path) -> bool:
    """A folder this user can write in, or one it can make (its parent is such a folder)."""
    if path.exists():
        return path.is_dir() and os.access(path, os.W_OK | os.X_OK)
    return path.parent.is_dir() and os.access(path.parent, os.W_OK | os.X_OK)


def _head_start(args: argparse.Namespace) -> HeadStart | None:
    """--markdown and --candidates start their processes of their own before this one imports torch."""
    if not (args.markdown or args.candidates):
        return None
    from repro.filing.material import head_start

    return head_start(get(args.bug[0]), args.device, args.slow, script=bool(args.markdown))


@dataclass(frozen=True)
class _Context:
    """What every mode is given: the arguments, the ledger, the head start, the environment, and how to fail."""

    args: argparse.Namespace
    ledger: dict
    started: HeadStart | None
    environment: Environment
    fail: Callable[[object], int]

    @property
    def asked(self) -> list[Bug]:
        """The bugs named with --bug, each once, in the order given."""
        return [get(bug_id) for bug_id in dict.fromkeys(self.args.bug)]


def _run(args: argparse.Namespace, ledger: dict, started: HeadStart | None, fail: Callable[[object], int]) -> int:
    """Resolve the environment, then hand over to the one mode the arguments pick (``MODES``)."""
    try:
        environment = resolve_environment(args.device)
    except EnvironmentProblem as problem:
        return fail(problem)
    if args.markdown and started:
        started.after_torch()  # the script, forked now; collect_env's subprocesses run meanwhile
    mode = next((name for name in MODES if getattr(args, name, False)), "report")
    if mode in OBSERVING or args.markdown:  # each would assert what it could not observe
        from repro.engine.oracle import torchscript_problem

        unusable = torchscript_problem(environment.device)
        if unusable:
            return fail(unusable)
    return (MODES.get(mode) or _report)(_Context(args, ledger, started, environment, fail))


def _list_bugs(context: _Context) -> int:
    """Only the bugs asked for, when some are."""
    from repro.catalogue import BUGS
    from repro.formats import text

    emit(shown(text.render_bugs(context.asked or BUGS.values())))
    return EXIT_OK


def _explain(context: _Context) -> int:
    """One section per bug asked for, in order (every bug without --bug)."""
    from repro.catalogue import BUGS, steps
    from repro.formats import text

    sections = [(bug, steps(bug)) for bug in context.asked or BUGS.values()]
    emit(shown(text.render_explanations(context.environment.torch_version, sections)))
    return EXIT_OK


def _workarounds(context: _Context) -> int:
    """One proof per bug asked for (every bug without --bug), in the catalogue's order."""
    from repro.catalogue import BUGS
    from repro.formats import json as json_format
    from repro.formats import text
    from repro.proof import prove

    environment = context.environment
    proofs = [prove(bug, environment.device) for bug in context.asked or BUGS.values()]
    emit(
        json_format.render_proofs(environment, proofs)
        if context.args.json
        else shown(text.render_proofs(environment.torch_version, proofs))
    )
    return EXIT_DRIFT if any(p.status == ProofStatus.DOES_NOT_WORK for p in proofs) else EXIT_OK


def _candidates(context: _Context) -> int:
    """Each candidate fix of the one bug asked for, judged by its scenarios with it applied."""
    from repro.filing.candidates import judge_all
    from repro.formats import text

    bug, environment, started = context.asked[0], context.environment, context.started
    results = judge_all(
        bug,
        environment.device,
        lambda line: print(line, file=sys.stderr, flush=True),
        started.candidates if started else None,
        context.args.slow,
    )
    emit(shown(text.render_candidates(bug, environment.torch_version, environment.device, results)))
    return EXIT_OK


def _report(context: _Context) -> int:
    """The scenarios run against eager and concluded per bug: text, --json or --markdown."""
    from repro.catalogue import BUGS, explain, select
    from repro.engine.forked import usable_processes
    from repro.engine.oracle import run_all
    from repro.report import conclude

    args, environment = context.args, context.environment
    # the body says which other APIs matched: it runs the default scenarios, and its bug's own if none is
    selection = select([], args.slow, also=(args.bug[0],)) if args.markdown else select(args.bug, args.slow)
    expected: dict[str, Expectation] = {
        bug_id: expectation_for(context.ledger, environment.torch_version, bug_id) for bug_id in BUGS
    }
    # an issue body's other processes (its script, its candidates) take the cores meanwhile: forked
    # copies of this one would only contend with them
    processes = 1 if args.markdown else usable_processes(environment.device)
    report = conclude(
        environment,
        run_all(environment.device, selection.scenarios, processes, explains=explain),
        expected,
        selection.skipped,
        tuple(selection.not_run),
        lambda more: run_all(environment.device, more, processes, explains=explain),
    )
    _render_report(context, report)
    if report.matches_expectation:
        return EXIT_OK
    if report.outcome == Outcome.CANNOT_TEST:
        return context.fail(report.run.cannot_test or "nothing to test")
    return EXIT_DRIFT


def _render_report(context: _Context, report: Report) -> None:
    """The report in the format asked for, with what it shows beside it: each asked bug's root cause
    (--json, --markdown) and, for --markdown, what the head start gathered."""
    from repro.catalogue import steps
    from repro.formats import Material, ReportFormat, render

    args = context.args
    kind = ReportFormat.JSON if args.json else ReportFormat.MARKDOWN if args.markdown else ReportFormat.TEXT
    if kind == ReportFormat.TEXT:
        emit(shown(render(kind, report, Material())))
        return
    causes = {bug.id: steps(bug) for bug in context.asked}  # before gather, which ends waiting on other processes
    filing = _filing(context, report) if kind == ReportFormat.MARKDOWN else None
    emit(render(kind, report, Material(causes, filing)))


def _filing(context: _Context, report: Report) -> Filing:
    """--markdown's material: the report's runs, made here on torch as installed, are the candidates'
    baseline too."""
    from repro.filing.material import gather

    started = context.started
    assert started is not None  # --markdown always has its head start (_head_start)
    return gather(
        context.asked[0],
        context.environment.torch_npu,
        context.environment.device,
        lambda line: print(line, file=sys.stderr, flush=True),
        started,
        context.args.slow,
        report.run.results,
    )


def _support_table(context: _Context) -> int:
    """Every scenario, every tier, summarised per API (repro.formats.support_table), each bug with what
    the ledger records of its workaround on this release (proven by the tracker, not run here)."""
    environment, as_json, ledger, fail = context.environment, context.args.json, context.ledger, context.fail
    import json
    import sysconfig

    from repro.catalogue import explain, select
    from repro.engine.forked import usable_processes
    from repro.engine.oracle import run_all
    from repro.engine.scenarios import fingerprint
    from repro.formats import support_table

    scenarios = select([], slow=True).scenarios
    run = run_all(environment.device, scenarios, usable_processes(environment.device), explains=explain)
    if run.cannot_test:
        return fail(run.cannot_test)
    rows = support_table.support_rows(run.results)
    entry = ledger["releases"].get(release_key(environment.torch_version)) or {}
    proofs = support_table.proven(entry, fingerprint(), environment.device)
    emit(
        json.dumps(
            {
                "schema": support_table.SCHEMA,
                "torch_version": environment.torch_version,
                "python_version": environment.python_version,
                "platform": sysconfig.get_platform(),
                "device": environment.device,
                "codes": list(support_table.CODES),
                "scenario_table": fingerprint(),
                "rows": support_table.as_dicts(rows, proofs),
            },
            indent=2,
        )
        if as_json
        else shown(support_table.render(environment, rows, proofs))
    )
    return EXIT_OK


def _patch(bug: Bug, fail: Callable[[object], int], against: Path | None) -> int:
    from repro.filing.upstream_patch import PatchError, proposed_diff

    try:
        emit(proposed_diff(bug, against), end="")
    except (PatchError, FileNotFoundError) as problem:
        return fail(problem)
    if against is None:
        print(
            "note: the torch/ hunks are against the installed release, not upstream's main branch\n"
            "      (--against PYTORCH_CHECKOUT makes them against a checkout)",
            file=sys.stderr,
        )
    return EXIT_OK


def _explore(context: _Context) -> int:
    """Generated models against their eager twins (``repro.explore``), the catalogue's recognisers
    explaining what they can; exit 1 while a departure stays unexplained. With --workarounds, each
    bug's workaround (one bug's with --bug) in force on models in its reach: exit 1 unless each holds."""
    from repro.catalogue import BUGS, explain
    from repro.explore.run import explore
    from repro.formats import json as json_format
    from repro.formats import text

    args, environment = context.args, context.environment
    if environment.device != "cpu":
        return context.fail("--explore runs on CPU only (its cases run in forked workers): add --device cpu")
    budget, seed = args.budget or BUDGET, args.seed or 0
    run = partial(explore, budget, seed, explain, _progress(), database=args.database)
    if args.workarounds:
        bugs = [get(args.bug[0])] if args.bug else list(BUGS.values())
        tried = [(bug, _in_force(bug)) for bug in bugs]
        if args.bug and isinstance(tried[0][1], str):
            why = tried[0][1]
            return context.fail(f"{bugs[0].id}'s workaround {why}: nothing to put in force on generated models")
        explorations = [
            run(within=(bug.id, bug.reach), workaround=how) for bug, how in tried if not isinstance(how, str)
        ]
        _progress_ends()
        ran = [e for e in explorations if e.cases]
        if not ran:  # "holds" would claim what no case showed
            return context.fail(f"--explore ran no case within {budget:.0f} s: give it a longer --budget")
        skipped = {bug.id: how for bug, how in tried if isinstance(how, str)}
        skipped |= {e.within: f"met no model in its reach within {budget:.0f} s" for e in explorations if not e.cases}
        emit(
            json_format.render_workaround_explorations(environment, ran, skipped)
            if args.json
            else shown(text.render_workaround_explorations(environment.torch_version, ran, skipped))
        )
        return EXIT_OK if all(e.workaround_verdict() is WorkaroundVerdict.HOLDS for e in ran) else EXIT_DRIFT
    if args.bug:  # models in the bug's reach only
        bug = get(args.bug[0])
        exploration = run(within=(bug.id, bug.reach))
    else:
        exploration = run()
    _progress_ends()
    if exploration.cases == 0:  # "nothing unexplained" would claim what no case showed
        return context.fail(f"--explore ran no case within {exploration.budget:.0f} s: give it a longer --budget")
    emit(
        json_format.render_exploration(environment, exploration)
        if args.json
        else shown(text.render_exploration(environment.torch_version, exploration))
    )
    return EXIT_DRIFT if exploration.unexplained() else EXIT_OK


def _in_force(bug: Bug) -> tuple[str, Callable[[], Any]] | str:
    """The bug's workaround as the explorer puts it in force around a twin's run, or why it cannot."""
    workaround = bug.workaround
    if workaround is None or workaround.apply is None:
        return "is none"
    if workaround.style:
        return "changes the model's forward"
    if workaround.instead:
        return "changes where the model's code does it"
    return (workaround.name, workaround.apply)


def _progress_ends() -> None:
    if sys.stderr.isatty():
        print(file=sys.stderr)


def _progress() -> Callable[[Any], None]:
    """One line on stderr (where it is a terminal), rewritten at most twice a second while the
    exploration runs."""
    last = [0.0]
    if not sys.stderr.isatty():
        return lambda exploration: None

    def show(exploration: Any) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.5:
            last[0] = now
            within = f"{exploration.within}: " if exploration.within else ""
            line = (
                f"{within}explored {exploration.cases} cases, {len(exploration.found)} departures, "
                f"{exploration.seconds:.0f} s"
            )
            print(f"\r{line[:99]:<99}", end="", file=sys.stderr, flush=True)

    return show


# The modes by the option that picks each (the first given wins; the CLI refuses clashing ones), and those
# that assert what they observe: without a usable TorchScript they fail instead.
MODES: dict[str, Callable[[_Context], int]] = {
    "list_bugs": _list_bugs,
    "support_table": _support_table,
    "explain": _explain,
    "explore": _explore,  # before workarounds: --explore --workarounds tries a workaround on generated models
    "workarounds": _workarounds,
    "candidates": _candidates,
}
OBSERVING = ("explain", "workarounds", "candidates", "explore")
