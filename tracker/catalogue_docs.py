"""The parts of the docs that list the catalogued bugs, generated from the catalogue, never copied.

    python -m tracker.catalogue_docs [--check]

Each part sits between ``<!-- generated: NAME -->`` and ``<!-- /generated: NAME -->`` in its page:
``bugs`` in README.md (id and headline), ``bugs`` in docs/reproducer.md (id, title, symptom,
upstream report) and ``candidates`` in docs/filing.md (each bug's candidate fixes and what its
upstream patch is). Adding a bug to the catalogue and running this adds it everywhere. ``--check``
writes nothing and exits 1 naming each page whose part differs from what the catalogue gives now
(``tests/test_catalogue_docs.py`` runs it). Exit codes: 0 written (or current), 1 stale (with
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


PARTS: dict[tuple[str, str], Callable[[Iterable[Bug]], str]] = {
    ("README.md", "bugs"): readme_bugs,
    ("docs/reproducer.md", "bugs"): reproducer_bugs,
    ("docs/filing.md", "candidates"): filing_candidates,
}


def begin(name: str) -> str:
    return f"<!-- generated: {name} -->"


def end(name: str) -> str:
    return f"<!-- /generated: {name} -->"


def rewritten(text: str, name: str, part: str) -> str:
    """``text`` with its part ``name`` replaced by ``part`` (``ValueError`` unless it holds the two
    markers once each, in order)."""
    lines = text.split("\n")
    if lines.count(begin(name)) != 1 or lines.count(end(name)) != 1:
        raise ValueError(f"it does not hold {begin(name)} and {end(name)} once each")
    start, stop = lines.index(begin(name)), lines.index(end(name))
    if start > stop:
        raise ValueError(f"{end(name)} comes before {begin(name)}")
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
            pages[page] = rewritten(text, name, render(bugs.values()))
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
