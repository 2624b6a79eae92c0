"""The parts of the docs that list the catalogued bugs, generated from the catalogue, never copied.

    python -m tracker.catalogue_docs [--check]

Each part sits between ``<!-- generated: NAME -->`` and ``<!-- /generated: NAME -->`` in its page
(``# generated: NAME`` and ``# /generated: NAME`` in pyproject.toml): ``bugs`` in README.md (id and
headline), ``bugs`` in docs/reproducer.md (id, title, symptom, upstream report), ``candidates`` in
docs/filing.md (each bug's candidate fixes and what its upstream patch is) and ``bug-contracts`` in
pyproject.toml (the import-linter contracts that keep the bug folders independent of each other and
out of reach of the CLI, the formats, the report and the tracker but through the registry). Adding a
bug to the catalogue and running this adds it everywhere. ``--check`` writes nothing and exits 1
naming each page whose part differs from what the catalogue gives now
(``tests/tracker/test_catalogue_docs.py`` runs it). Exit codes: 0 written (or current), 1 stale (with
``--check``), 2 a page that cannot be read or written, or lacks its markers.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

if __package__ in (None, ""):  # run as `python tracker/catalogue_docs.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from repro import atomic
from repro.catalogue import BUGS
from repro.catalogue.bug import Bug

ROOT = Path(__file__).resolve().parents[1]
EXIT_OK, EXIT_STALE, EXIT_USAGE = 0, 1, 2


_DUNDER = re.compile(r"(?<![`\w])[\w.]*__\w+__(?:\(\))?")  # Module.__init__(), __init__: bold in Markdown


def _cell(text: str) -> str:
    """Catalogue prose in a table cell: its dunder names as code spans (Markdown reads ``__x__`` as
    bold), and a pipe escaped (it would end the cell)."""
    return _DUNDER.sub(lambda m: f"`{m.group()}`", text).replace("|", "\\|")


def readme_bugs(bugs: Iterable[Bug]) -> str:
    rows = [f"| `{bug.id}` | {_cell(bug.headline)} |" for bug in bugs]
    return "\n".join(["| id | what |", "| --- | --- |", *rows])


def reproducer_bugs(bugs: Iterable[Bug]) -> str:
    rows = [f"| `{bug.id}` | {_cell(bug.title)} | {_cell(bug.symptom)} | {bug.upstream} |" for bug in bugs]
    return "\n".join(["| id | what | how it shows | upstream |", "| --- | --- | --- | --- |", *rows])


def filing_candidates(bugs: Iterable[Bug]) -> str:
    rows = [
        f"| `{bug.id}` | {', '.join(f'`{name}`' for name in bug.fixes.all())} | {bug.fixes.patch.kind} |"
        for bug in bugs
    ]
    return "\n".join(["| bug | candidates | upstream patch |", "|---|---|---|", *rows])


def bug_contracts(bugs: Iterable[Bug]) -> str:
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


PARTS: dict[tuple[str, str], Callable[[Iterable[Bug]], str]] = {
    ("README.md", "bugs"): readme_bugs,
    ("docs/reproducer.md", "bugs"): reproducer_bugs,
    ("docs/filing.md", "candidates"): filing_candidates,
    ("pyproject.toml", "bug-contracts"): bug_contracts,
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


def generated(root: Path = ROOT, bugs: dict[str, Bug] = BUGS) -> dict[str, str]:
    """Each page as the catalogue makes it now (``ValueError``, one sentence, for a page without its
    markers; ``OSError`` for one that cannot be read)."""
    pages: dict[str, str] = {}
    for (page, name), render in PARTS.items():
        text = pages.get(page)
        if text is None:
            text = (root / page).read_text(encoding="utf-8")
        try:
            pages[page] = rewritten(text, name, render(bugs.values()), page)
        except ValueError as err:
            raise ValueError(f"{page}: {err}") from None
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="catalogue_docs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is stale")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    args = parser.parse_args(argv)
    try:
        pages = generated(args.root)
        stale = [page for page, text in pages.items() if (args.root / page).read_text(encoding="utf-8") != text]
        if not args.check:
            for page in stale:
                atomic.replace(args.root / page, pages[page])
    except (OSError, ValueError) as err:
        print(f"catalogue_docs: error: {getattr(err, 'why', None) or err}", file=sys.stderr)
        return EXIT_USAGE
    for page in stale:
        print(f"{page}: {'stale (run python -m tracker.catalogue_docs)' if args.check else 'written'}")
    return EXIT_STALE if args.check and stale else EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
