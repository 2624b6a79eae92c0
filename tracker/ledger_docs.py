"""What the committed ledger holds, in one paragraph of docs/ledger.md and docs/tracker.md, written from
the ledger by ``python -m tracker.catalogue_docs``: a count typed once goes stale with the next run of
the tracker (the pages said "four bugs" long after the ledger held 18)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from repro import ledger as ledger_io
from repro.catalogue.bug import Bug
from repro.versions import ordered


def _list(versions: list[str]) -> str:
    return ", ".join(versions[:-1]) + f" and {versions[-1]}" if len(versions) > 1 else "".join(versions)


def holdings(bugs: Iterable[Bug], root: Path) -> str:
    """The paragraph, within 100 columns: releases swept, releases run and what the runs found, the
    scenario tables of their support columns, and the releases keeping cells from before them."""
    try:
        releases: dict[str, Any] = ledger_io.load(root / "repro" / "ledger.json")["releases"]
    except ledger_io.LedgerError as err:
        raise ValueError(str(err)) from None
    swept = ordered(releases)
    if not swept:
        return "The committed ledger holds no release yet."
    run = {
        version: [((b or {}).get("dynamic") or {}).get("verdict") for b in (entry.get("bugs") or {}).values()]
        for version, entry in releases.items()
    }
    run = {version: verdicts for version, verdicts in run.items() if any(verdicts)}
    catalogued = len(list(bugs))
    found: dict[tuple[int, int], list[str]] = {}
    for version in ordered(run):
        verdicts = run[version]
        found.setdefault((sum(v == "present" for v in verdicts), sum(bool(v) for v in verdicts)), []).append(version)
    said = "; ".join(
        f"{present} of {judged} bugs present on {_list(versions)}"
        for (present, judged), versions in sorted(found.items(), reverse=True)
    )
    tables = sorted(
        {col.get("table", "?") for entry in releases.values() for col in (entry.get("support") or {}).values()}
    )
    legacy = ordered(v for v, entry in releases.items() if entry.get("support_legacy"))
    text = (
        f"The committed ledger holds {len(swept)} releases ({swept[0]} to {swept[-1]}), each swept "
        f"statically; {len(run)} were also run (the reproducer, installed in a throwaway environment): "
        f"{said} (the catalogue has {catalogued}). Their support columns were measured with the scenario table"
        f"{'s' * (len(tables) != 1)} {_list([f'`{t}`' for t in tables])}"
        + (f"; {len(legacy)} keep older cells as `support_legacy` ({_list(legacy)})." if legacy else ".")
    )
    return "\n".join(textwrap.wrap(text, 100, break_on_hyphens=False, break_long_words=False))
