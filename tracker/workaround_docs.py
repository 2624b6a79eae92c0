"""docs/downstream.md's sections, one per bug, from the bug's folder and the ledger, never copied.

A section is the folder's ``downstream.md`` (the workaround in prose: how to use it, why it works,
where not to, what was tried) with its ``<!-- proof -->`` line replaced by what the ledger records
of proving the workaround (``python -m repro --workarounds``, run by the tracker): status, verdict,
counts and what it held on. The release shown is the newest whose ledger entry holds such a
record on CPU (a bug it lacks says "not proven yet"); no figure comes from a run at generation time.
``python -m tracker.catalogue_docs`` writes the sections with the other generated lists."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from repro import ledger as ledger_io
from repro.catalogue.bug import Bug
from repro.sanitise import plain
from repro.versions import ordered
from tracker.support_doc import wrapped

PROOF = "<!-- proof -->"
FRAGMENT = "downstream.md"  # in each bug's folder
STATUS_WORDS = {"works": "works", "works-with-limits": "works with limits", "does-not-work": "does not work"}


def documented(ledger: dict[str, Any], bugs: Iterable[Bug]) -> tuple[str, dict[str, dict[str, Any]]]:
    """The newest release whose entry records a bug's proof on CPU with what it held on, and the proofs
    it records so, by bug id (a bug added since has none yet); ``ValueError`` (one sentence) where no
    release does."""
    ids = [bug.id for bug in bugs]
    recorded = {}
    for version, entry in ledger["releases"].items():
        proofs = {bug_id: ((entry.get("bugs") or {}).get(bug_id) or {}).get("workaround") for bug_id in ids}
        shown = {k: p for k, p in proofs.items() if p and p.get("space") and p.get("device", "cpu") == "cpu"}
        if shown:
            recorded[version] = shown
    releases = ordered(recorded)
    if not releases:
        raise ValueError("the ledger holds no proof saying what it held on: run tracker.check_upstream")
    return releases[-1], recorded[releases[-1]]


def proof_paragraph(release: str, proof: dict[str, Any] | None, explored: dict[str, Any] | None = None) -> str:
    """What the ledger records of the proof, and of the same workaround on generated models (the
    explorer's ``explored`` record) where it has one, as one paragraph within 100 columns."""
    if proof is None:
        return "\n".join(
            wrapped(
                f"Not proven yet: the ledger records no proof of it on torch {release} (`python -m "
                f"tracker.check_upstream --versions {release}` records one)."
            )
        )
    said = f"{plain(proof['summary'])}. Held on {plain(proof['space'])}."
    if proof["status"] == "none":
        text = f"Measured with nothing in force on torch {release}, CPU, as the ledger records it: {said}"
    else:
        verdict = f", {plain(proof['verdict'])}" if proof.get("verdict") else ""
        status = STATUS_WORDS.get(proof["status"], plain(proof["status"]))
        text = f"Proven on torch {release}, CPU, as the ledger records it: {status}{verdict}. {said}"
        if explored and explored["workaround"] == proof["workaround"]:
            text += (
                f" On generated models (`python -m repro --explore --workarounds`): {plain(explored['verdict'])} "
                f"on {plain(explored['space'])}."
            )
    return "\n".join(wrapped(text, outside=True))


def sections(bugs: Iterable[Bug], root: Path) -> str:
    """Every bug's section, in the catalogue's order: ``OSError`` for a fragment or ledger that cannot
    be read, ``ValueError`` for one without its proof line or a ledger without the proofs."""
    bugs = list(bugs)
    try:
        ledger = ledger_io.load(root / "repro" / "ledger.json")
    except ledger_io.LedgerError as err:
        raise ValueError(str(err)) from None
    release, proofs = documented(ledger, bugs)
    intro = (
        f"Each section's proof below: what `python -m repro --workarounds` measured on torch {release}, CPU, "
        "as the ledger records it (`python -m tracker.check_upstream --versions X` records it per release)."
    )
    parts = ["\n".join(wrapped(intro))]
    for bug in bugs:
        path = root / "repro" / "catalogue" / bug.id.replace("-", "_") / FRAGMENT
        fragment = path.read_text(encoding="utf-8").strip()
        if fragment.split("\n").count(PROOF) != 1:
            raise ValueError(f"{path.parent.name}/{FRAGMENT} lacks its one {PROOF} line")
        explored = ledger_io.verdicts_of(ledger["releases"][release], bug.id).get("explored")
        paragraph = proof_paragraph(release, proofs.get(bug.id), explored)
        parts.append(f"### `{bug.id}`\n\n{fragment.replace(PROOF, paragraph)}")
    return "\n\n".join(parts)
