"""The README and docs/ are checked, not trusted: every option, JSON key, limit, entry point and bug
they should name, nothing they name that does not exist, and the README's size, widths and excerpt."""

from __future__ import annotations

import argparse
import re
from dataclasses import fields
from unittest import mock

import pytest
import tomllib

from helpers import ROOT, run
from repro.catalogue import BUGS
from repro.cli import build_parser as repro_parser
from repro.cli import main as repro_main
from repro.engine.oracle import OracleRun, ScenarioResult, Side
from repro.engine.scenarios import SCENARIOS, fingerprint
from repro.environment import Environment
from repro.filing.candidates import candidates_of
from repro.formats.json import as_dict
from repro.ledger import DEFAULT_PATH, Expectation, load
from repro.report import build_report
from repro.vocabulary import Verdict
from tools import release
from tracker import catalogue_docs, device_report, matrix, patches_on_main, rolling_issue, rolling_pr
from tracker.check_upstream import _as_json
from tracker.check_upstream import build_parser as tracker_parser
from tracker.remote import Limits
from tracker.sweep import Outcome

README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = {path.name: path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").glob("*.md"))}
ALL = "\n".join([README, *PAGES.values()])


def _prose(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)  # without fenced blocks


# Code spans, a span wrapped over two lines joined again.
SPANS = [
    " ".join(span.split()) for text in (README, *PAGES.values()) for span in re.findall(r"`([^`]+)`", _prose(text))
]
DOCUMENTED = {word for span in SPANS for word in re.findall(r"--?[A-Za-z][\w-]*|\w+", span)}


class _Stop(Exception):
    pass


def _parser_of(main) -> argparse.ArgumentParser:
    """The parser a ``main`` builds inside itself, caught as it parses."""
    caught: list[argparse.ArgumentParser] = []

    def parse_args(self, *args, **kwargs):
        caught.append(self)
        raise _Stop

    with mock.patch.object(argparse.ArgumentParser, "parse_args", parse_args), pytest.raises(_Stop):
        main([])
    return caught[0]


def _options(parser: argparse.ArgumentParser) -> set[str]:
    found = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _options(sub)
        found |= {opt for opt in action.option_strings if opt.startswith("--") and action.help != argparse.SUPPRESS}
    return found - {"--help"}


PARSERS = {
    "repro": repro_parser,
    "check_upstream": tracker_parser,
    "matrix": lambda: _parser_of(matrix.main),
    "rolling_pr": lambda: _parser_of(rolling_pr.main),
    "patches_on_main": lambda: _parser_of(patches_on_main.main),
    "rolling_issue": lambda: _parser_of(rolling_issue.main),
    "catalogue_docs": lambda: _parser_of(catalogue_docs.main),
    "release": release.build_parser,
    "device_report": lambda: _parser_of(device_report.main),
}
# Options the pages name that belong to other tools (pip, git, pytest, npm, uv) in their commands.
OTHER_TOOLS = {
    "--index-url", "--no-deps", "--target", "--upgrade", "--find-links", "--prefix", "--quiet", "--no-save",
    "--silent", "--check", "--wheel", "--no-config", "--extra-index-url", "--strict", "--upstream-ledger",
    "--dist", "--pre",
    "--live", "--notes",  # benchmarks/bench_tracker.py
    "--runs", "--skip-suite",  # benchmarks/bench_repro.py
    "--keep",  # benchmarks/bench_explore.py
    "--outdir",  # python -m build
}  # fmt: skip


@pytest.mark.parametrize("name", PARSERS)
def test_every_option_is_documented(name):
    assert _options(PARSERS[name]()) - DOCUMENTED == set()


def test_run_patched_options_are_documented():
    assert "--sources" in DOCUMENTED
    names = {name for bug in BUGS.values() for name in candidates_of(bug)}
    assert sorted(name for name in names if name not in ALL) == []


def test_every_option_written_in_a_code_span_exists():
    known = set().union(*(_options(make()) for make in PARSERS.values())) | {"--sources"} | OTHER_TOOLS
    named = {opt for span in SPANS for opt in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", span)}
    assert named - known == set()


def _repro_json() -> dict:
    side = Side({"hook calls": []}, None)
    run_ = OracleRun([ScenarioResult(SCENARIOS[0], "script_method", Verdict.MATCH, "", side, side)], [], None)
    expected = {bug_id: Expectation("present", "x") for bug_id in BUGS}
    report = build_report(Environment("2.13.0", "3.11", "cpu", "not installed"), run_, expected)
    return as_dict(report, {bug_id: ["a step"] for bug_id in BUGS})


def test_every_key_of_the_reproducer_json_is_documented():
    data = _repro_json()
    for keys in (data, data["scenarios"][0], data["bugs"][0]):
        assert set(keys) - DOCUMENTED == set()
    assert set(data) - set(re.findall(r"`(\w+)`", PAGES["reproducer.md"])) == set()  # in the reproducer's page


def test_every_key_of_the_tracker_json_is_documented():
    assert set(_as_json(Outcome(), {}, [])) - set(re.findall(r"`(\w+)`", PAGES["tracker.md"])) == set()


def test_every_json_key_written_in_a_code_span_exists():
    """A snake_case word in a code span is a key of some JSON this project writes, or a name in its code."""
    data = _repro_json()
    keys = set(data) | set(data["scenarios"][0]) | set(data["bugs"][0]) | set(_as_json(Outcome(), {}, []))
    sources = [path for d in ("repro", "tracker", "tests", ".github") for path in (ROOT / d).rglob("*.*")]
    code = "\n".join(path.read_text(encoding="utf-8") for path in sources if path.suffix in (".py", ".yml"))
    code += (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    code += (ROOT / "repro" / "ledger.json").read_text(encoding="utf-8")[:200_000]
    snake = {span for span in SPANS if re.fullmatch(r"[a-z]+(?:_[a-z0-9]+)+", span)}
    assert {word for word in snake - keys if word not in code} == set()


def test_the_limits_table_states_the_code_defaults():
    for limit in fields(Limits):
        row = next((line for line in PAGES["tracker.md"].splitlines() if f"`{limit.metadata['env']}`" in line), "")
        assert isinstance(limit.default, (int, float)), limit.name
        shown = f"{limit.default:g}" if isinstance(limit.default, float) else str(limit.default)
        assert f"| {shown} (" in row, f"{limit.metadata['env']}: docs/tracker.md row {row!r}"


def test_entry_points_benchmarks_and_bugs_are_documented():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    benchmarks = {f"benchmarks/{path.name}" for path in (ROOT / "benchmarks").glob("*.py")}
    assert {name for name in set(scripts) | benchmarks if name not in ALL} == set()
    assert {bug_id for bug_id in BUGS if f"`{bug_id}`" not in README} == set()  # the README's bug table


def test_the_readme_is_short_and_narrow():
    lines = README.splitlines()
    assert len(lines) <= 150 and [n for n, line in enumerate(lines, 1) if len(line) > 100] == []


def test_docs_prose_fits_100_columns():
    """Fenced blocks (commands, transcripts, code) and table rows are left as they are."""
    wide = {name: [line for line in _prose(text).splitlines() if len(line) > 100 and not line.lstrip().startswith("|")]
            for name, text in PAGES.items() if name not in ("release.md", "support-table.md")}  # fmt: skip
    assert {name: lines for name, lines in wide.items() if lines} == {}


def test_every_page_is_linked_from_the_readme():
    assert {name for name in PAGES if f"docs/{name}" not in README} == set()


def test_the_readme_set_up_is_what_ci_installs():
    ci = (ROOT / ".ci" / "run").read_text()
    install = re.search(r"^python -m pip install --quiet (torch==\S+ -e '\.\[test\]')$", ci, re.MULTILINE)
    assert install and f"python -m pip install {install.group(1)}" in README


@pytest.mark.slow  # a whole default run (1.4 s)
@pytest.mark.needs_bug(*BUGS)  # the excerpt shows the bugs present, as on the torch it was taken from
def test_the_readme_excerpt_is_a_real_run_counts_included(capsys):
    """Each line of the excerpt that is not ``...`` is a line of the default report, in the same order:
    exactly (counts and spaces included) on the torch the excerpt names, up to numbers on another."""
    assert repro_main([]) in (0, 1)
    real = capsys.readouterr().out.splitlines()
    excerpt = README.split("## What `python -m repro` prints", 1)[1].split("```", 2)[1].strip("\n").splitlines()
    same_torch = excerpt[0].split(" |")[0] == real[0].split(" |")[0]

    def shape(line: str) -> str:  # exact, spaces included, on the same torch (they align the columns)
        if same_torch:
            return line.rstrip()
        return re.sub(r"\d+(?:\.\d+)*(?:\+\w+)?", "N", re.sub(r" +", " ", line).strip())

    shapes = [shape(line) for line in real]
    at = 0
    for line in excerpt:
        if line == "...":
            continue
        want = shape(line)
        found = next((i for i in range(at, len(shapes)) if shapes[i] == want), None)
        assert found is not None, f"README excerpt line not in a real run (in order): {line!r}"
        at = found + 1


@pytest.mark.slow  # a nested pytest
def test_suite_outside_its_environment_says_what_to_do_in_one_sentence(tmp_path):
    """A shell where the venv is not active: torch missing, as a shadowing package makes it here."""
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError(\"No module named 'torch'\")\n")
    proc = run(
        ["-m", "pytest", "-p", "no:cacheprovider", str(ROOT / "tests" / "test_ledger.py")],
        env={"PYTHONPATH": f"{tmp_path}:{ROOT}"},
    )
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    assert proc.returncode == 4 and "Traceback" not in proc.stdout + proc.stderr
    assert lines == [
        "Exit: torch cannot be imported: ImportError: No module named 'torch'; activate the "
        "project's environment (. .venv/bin/activate) or create it with the README's set-up command."
    ]


def test_downstream_has_one_workaround_section_per_bug():
    """Each bug's section, in the catalogue's order; a bug with no workaround says "None" first."""
    sections = re.findall(r"^### `([\w-]+)`\n\n(.*?)(?=^### |^## )", PAGES["downstream.md"], re.MULTILINE | re.DOTALL)
    assert [bug_id for bug_id, _ in sections] == list(BUGS)
    for bug_id, text in sections:
        found = BUGS[bug_id].workaround
        assert found is not None and text.startswith("None: ") == (found.apply is None), bug_id


def test_each_workaround_sections_figures_are_the_ledgers_proof_on_the_release_it_names():
    """'Proven: N of M' is what the tracker recorded for that release, not a number typed once."""
    sections = re.findall(r"^### `([\w-]+)`\n\n(.*?)(?=^### |^## )", PAGES["downstream.md"], re.MULTILINE | re.DOTALL)
    release = re.search(
        r"Each section's proof below: .*?torch\s+(\d+\.\d+\.\d+), CPU", PAGES["downstream.md"], re.DOTALL
    )
    assert release and sections
    entry = load(DEFAULT_PATH)["releases"][release.group(1)]  # the docs describe the packaged ledger
    for bug_id, text in sections:
        proof = entry["bugs"][bug_id]["workaround"]
        assert proof["table"] == fingerprint(), f"{bug_id}: proven with another scenario table; measure it again"
        figures = re.search(r"(\d+)\s+of\s+(\d+)\s+calls", text)
        assert figures and (int(figures.group(1)), int(figures.group(2))) == (proof["matched"], proof["runs"]), bug_id


# What a "Proven" must say: a bare "Proven: N of M" told a user nothing of where it held.
PROVEN_SAYS = {
    "the torch": r"torch \d+\.\d+\.\d+",
    "the calls": r"calls 1-3",
    "the sizes": r"sizes 2x2, 3x2(,| and) 1x1",
    "the shapes": r"\bshapes?\b",
    "what was compared": (
        r"compared: outputs and (their )?dtypes, every gradient( \([^)]*\))?, hook calls(,| and) exceptions"
    ),
}


@pytest.mark.parametrize("name", ["README.md", *PAGES])
def test_every_proven_in_the_docs_says_what_it_held_on(name):
    text = README if name == "README.md" else PAGES[name]
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        for found in re.finditer(r"\bProven\b", flat):
            said = flat[found.start() :]
            missing = [what for what, pattern in PROVEN_SAYS.items() if not re.search(pattern, said)]
            assert not missing, f"{name}: {said[:80]!r}... does not say {', '.join(missing)}"


def test_the_proven_check_fails_on_a_bare_count():
    """The check above, on the sentence this page printed until 2026-12-05."""
    bare = "Proven: 52 of 52. Tried: copy.deepcopy keeps the original's training mode."
    assert [w for w, pattern in PROVEN_SAYS.items() if not re.search(pattern, bare)] == list(PROVEN_SAYS)
