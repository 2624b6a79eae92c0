"""The parts of the docs that list the catalogued bugs, generated from the catalogue, never copied.

    python -m tracker.catalogue_docs [--check]

Each part sits between ``<!-- generated: NAME -->`` and ``<!-- /generated: NAME -->`` in its page
(``# generated: NAME`` and ``# /generated: NAME`` in pyproject.toml): ``bugs`` in README.md (id and
headline), ``bugs`` in docs/reproducer.md (id, title, symptom, upstream report), ``candidates`` in
docs/filing.md (each bug's candidate fixes and what its upstream patch is), ``workarounds`` in
docs/downstream.md (each bug's section: its folder's ``downstream.md`` with the ledger's proof, see
``tracker.workaround_docs``), ``holdings`` in docs/ledger.md and docs/tracker.md (what the
committed ledger holds, ``tracker.ledger_docs``) and ``bug-contracts`` in
pyproject.toml (the import-linter contracts that keep the bug folders independent of each other and
out of reach of the CLI, the formats, the report and the tracker but through the registry). Adding a
bug to the catalogue and running this adds it everywhere. ``--check`` writes nothing and exits 1
naming each page whose part differs from what the catalogue gives now
(``tests/tracker/test_catalogue_docs.py`` runs it). Exit codes: 0 written (or current), 1 stale (with
``--check``), 2 a page that cannot be read or written, or lacks its markers, 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

if __package__ in (None, ""):  # run as `python tracker/catalogue_docs.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from repro import atomic
from repro.catalogue import BUGS
from repro.catalogue.bug import Bug
from repro.sanitise import code_names, one_line
from tracker import ledger_docs, workaround_docs

ROOT = Path(__file__).resolve().parents[1]
EXIT_OK, EXIT_STALE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _cell(text: str) -> str:
    """Catalogue prose in a table cell: its code names as code spans (Markdown reads ``__x__`` as bold),
    and a pipe escaped (it would end the cell)."""
    return code_names(text).replace("|", "\\|")


def readme_bugs(bugs: Iterable[Bug], root: Path) -> str:
    rows = [f"| `{bug.id}` | {_cell(bug.headline)} |" for bug in bugs]
    return "\n".join(["| id | what |", "| --- | --- |", *rows])


def reproducer_bugs(bugs: Iterable[Bug], root: Path) -> str:
    rows = [f"| `{bug.id}` | {_cell(bug.title)} | {_cell(bug.symptom)} | {bug.upstream} |" for bug in bugs]
    return "\n".join(["| id | what | how it shows | upstream |", "| --- | --- | --- | --- |", *rows])


def filing_candidates(bugs: Iterable[Bug], root: Path) -> str:
    rows = [
        f"| `{bug.id}` | {', '.join(f'`{name}`' for name in bug.fixes.all())} | {bug.fixes.patch.kind} |"
        for bug in bugs
    ]
    return "\n".join(["| bug | candidates | upstream patch |", "|---|---|---|", *rows])


def bug_contracts(bugs: Iterable[Bug], root: Path) -> str:
    folders = "".join(f'    "repro.catalogue.{bug.id.replace("-", "_")}",\n' for bug in bugs)
    return (
        "[[tool.importlinter.contracts]]\n"
        "name = \"No bug's folder imports another's\"\n"
        'type = "independence"\n'
        f"modules = [\n{folders}]\n"
        "\n"
        "[[tool.importlinter.contracts]]\n"
        'name = "The CLI, formats, report and tracker reach a bug only through the registry"\n'
        'type = "forbidden"\n'
        'source_modules = ["repro.cli", "repro.formats", "repro.report", "tracker", "tools"]\n'
        f"forbidden_modules = [\n{folders}]\n"
        "allow_indirect_imports = true"
    )


PARTS: dict[tuple[str, str], Callable[[Iterable[Bug], Path], str]] = {
    ("README.md", "bugs"): readme_bugs,
    ("docs/reproducer.md", "bugs"): reproducer_bugs,
    ("docs/filing.md", "candidates"): filing_candidates,
    ("pyproject.toml", "bug-contracts"): bug_contracts,
    ("docs/downstream.md", "workarounds"): workaround_docs.sections,  # with figures from the ledger
    ("docs/ledger.md", "holdings"): ledger_docs.holdings,  # what the committed ledger holds
    ("docs/tracker.md", "holdings"): ledger_docs.holdings,
}


def begin(name: str, page: str = ".md") -> str:
    return f"# generated: {name}" if page.endswith(".toml") else f"<!-- generated: {name} -->"


def end(name: str, page: str = ".md") -> str:
    return f"# /generated: {name}" if page.endswith(".toml") else f"<!-- /generated: {name} -->"


def rewritten(text: str, name: str, part: str, page: str = ".md") -> str:
    """``text`` with its part ``name`` replaced by ``part`` (``ValueError`` unless it holds the two
    markers once each, in order)."""
    first, last = begin(name, page), end(name, page)
    lines = text.split("\n")
    if lines.count(first) != 1 or lines.count(last) != 1:
        raise ValueError(f"it does not hold {first} and {last} once each")
    start, stop = lines.index(first), lines.index(last)
    if start > stop:
        raise ValueError(f"{last} comes before {first}")
    return "\n".join([*lines[: start + 1], part, *lines[stop:]])


def current(root: Path = ROOT) -> dict[str, str]:
    """Each page as it is now, read once (``OSError`` for one that cannot be read)."""
    return {page: (root / page).read_text(encoding="utf-8") for page in dict.fromkeys(page for page, _ in PARTS)}


def generated(root: Path = ROOT, bugs: dict[str, Bug] = BUGS, pages: dict[str, str] | None = None) -> dict[str, str]:
    """Each page as the catalogue makes it now, from ``pages`` (read from ``root`` where not given):
    ``ValueError``, one sentence, for a page without its markers."""
    pages = dict(pages if pages is not None else current(root))
    for (page, name), render in PARTS.items():
        part = render(bugs.values(), root)  # its errors name their own input
        try:
            pages[page] = rewritten(pages[page], name, part, page)
        except ValueError as err:
            raise ValueError(f"{page}: {err}") from None
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="catalogue_docs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is stale")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    args = parser.parse_args(argv)
    try:
        before = current(args.root)
        pages = generated(args.root, pages=before)
        stale = [page for page, text in pages.items() if before[page] != text]
        if not args.check:
            for page in stale:
                atomic.replace(args.root / page, pages[page])
    except (OSError, ValueError) as err:
        print(one_line(f"catalogue_docs: error: {getattr(err, 'why', None) or err}", 100), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("catalogue_docs: interrupted; every page is whole (each is replaced in one rename)", file=sys.stderr)
        return EXIT_INTERRUPTED
    for page in stale:
        print(f"{page}: {'stale (run python -m tracker.catalogue_docs)' if args.check else 'written'}")
    return EXIT_STALE if args.check and stale else EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
