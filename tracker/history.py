"""The ledger's history rules, in one place: per bug, the release that fixed it and the releases that
regressed (``recompute``), a bug's status on a release (``status``, ``workaround_status``), and what
changed between two ledgers (``changes``) as structured ``Change`` records. The check's summary, its
rolling pull request and the release notes all read these records; none parses a line back.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from packaging.version import Version

from repro import ledger as ledger_io
from repro.catalogue import BUGS

# Statuses a move to or from is not a change: the bug's APIs are absent, or the probe could not tell.
_SILENT = {None, "unknown", "not-applicable"}


@dataclass(frozen=True)
class Change:
    """One change that means 'time to flip the tests' for ``bug_id``.

    ``kind``: ``fixed_in`` (the release that fixed it moved; ``release`` None), ``regressed`` (present
    again after a confirmed fix), ``status`` (its status on ``release`` moved) or ``workaround`` (what
    proving its workaround on ``release`` found moved)."""

    bug_id: str
    kind: str
    release: str | None
    before: str | None
    after: str | None

    @property
    def what(self) -> str:
        """The change in words, without the bug's id (the release notes group by bug)."""
        if self.kind == "fixed_in":
            return f"fixed_in {self.before or 'none'} -> {self.after or 'none'}"
        if self.kind == "regressed":
            return f"{self.release} regressed (present again after a confirmed fix)"
        if self.kind == "workaround":
            return f"{self.release}: workaround {self.before} -> {self.after}"
        look = " (needs a look: its error is gone, its APIs still depart)" * (self.after == "incomplete-fix")
        return f"{self.release}: {self.before} -> {self.after}{look}"

    def __str__(self) -> str:
        """The line the check prints and its pull request shows."""
        return f"{self.bug_id}: {self.what}"

    @classmethod
    def from_json(cls, record: object) -> Change:
        """A change as ``check_upstream --json`` lists it (``dataclasses.asdict``), checked field by
        field: anything else is a ``ValueError`` in one sentence."""
        fields = ("bug_id", "kind", "release", "before", "after")
        if not isinstance(record, dict) or sorted(record) != sorted(fields):
            raise ValueError(f"a change must be an object with exactly {', '.join(fields)}")
        if not all(isinstance(record[f], str) for f in ("bug_id", "kind")) or not all(
            record[f] is None or isinstance(record[f], str) for f in ("release", "before", "after")
        ):
            raise ValueError("a change's bug_id and kind are strings, its release, before and after strings or null")
        return cls(**record)


def recompute(data: dict[str, Any]) -> None:
    """Per bug, ``fixed_in``: the lowest release confirmed fixed; later confirmed-present ones regressed."""
    for bug_id in {*BUGS, *data["bugs"]}:
        _, releases = ledger_io.bug_history(data, bug_id)
        confirmed = {
            Version(v): e["dynamic"]["verdict"] for v, e in releases.items() if (e.get("dynamic") or {}).get("verdict")
        }
        fixed = sorted(v for v, verdict in confirmed.items() if verdict == "fixed")
        data["bugs"][bug_id] = {
            "fixed_in": str(fixed[0]) if fixed else None,
            "regressions": [str(v) for v in sorted(confirmed) if fixed and v > fixed[0] and confirmed[v] == "present"],
        }


def status(verdicts: dict[str, Any]) -> str | None:
    """A bug's status for one release: its confirmed dynamic verdict when there is one, else its static one."""
    return (verdicts.get("dynamic") or {}).get("verdict") or (verdicts.get("static") or {}).get("verdict")


def workaround_status(verdicts: dict[str, Any]) -> str | None:
    """What proving the bug's workaround on a release found (``repro.ledger.WORKAROUND_STATUSES``)."""
    return (verdicts.get("workaround") or {}).get("status")


def changes(before: dict[str, Any], after: dict[str, Any], measured: dict[str, dict[str, Any]]) -> list[Change]:
    """What ``after`` changed over ``before`` that means 'time to flip the tests', per bug: a new fixed_in
    or regression, or, for a bug ``measured`` wrote on a release (release -> the entry this run wrote), a status or a
    workaround's proof that differs from what the ledger held (for a new release: from the latest
    earlier release's). Moves to or from ``not-applicable`` and ``unknown`` are not changes, nor is a
    static ``changed`` that a confirmation turns into ``present``."""
    found = []
    for bug_id in sorted({*before["bugs"], *after["bugs"]}):
        old, new = before["bugs"].get(bug_id) or {}, after["bugs"].get(bug_id) or {}
        if old.get("fixed_in") != new.get("fixed_in"):
            found.append(Change(bug_id, "fixed_in", None, old.get("fixed_in"), new.get("fixed_in")))
        for version in sorted(set(new.get("regressions", [])) - set(old.get("regressions", []))):
            found.append(Change(bug_id, "regressed", version, None, "present"))
    proofs = []  # listed after the statuses: tests that rely on a workaround may break
    held = _Held(before, after)
    for version, entry in measured.items():
        for bug_id in entry.get("bugs") or {}:
            verdicts = ledger_io.verdicts_of(after["releases"].get(version, {}), bug_id)
            old_status, new_status = held.before(version, bug_id, status), status(verdicts)
            confirmed = (verdicts.get("dynamic") or {}).get("verdict") == new_status
            harmless = (old_status, new_status) == ("changed", "present") and confirmed  # the pre-signal, confirmed
            if not ({old_status, new_status} & _SILENT or old_status == new_status or harmless):
                found.append(Change(bug_id, "status", version, old_status, new_status))
            old_proof = held.before(version, bug_id, workaround_status)
            new_proof = workaround_status(verdicts)
            if old_proof and new_proof and old_proof != new_proof:
                proofs.append(Change(bug_id, "workaround", version, old_proof, new_proof))
    return found + proofs


class _Held:
    """What the ledger held before this run, for judging each release it measured: the other releases as
    they are now, a measured one as it was (absent if it is new). The releases are put in version order
    once, and each bug's statuses (or proofs) indexed once, not once per change: 12,000 changes cost a
    lookup and a binary search each, not a sort and a scan."""

    def __init__(self, before: dict[str, Any], after: dict[str, Any]) -> None:
        self.releases = {**after["releases"], **before["releases"]}
        self.held = set(before["releases"])
        self.position = {version: index for index, version in enumerate(sorted(self.releases, key=Version))}
        self._indexed: dict[tuple[str, Callable[..., Any]], tuple[list[int], list[str]]] = {}

    def before(self, version: str, bug_id: str, read: Callable[[dict[str, Any]], str | None]) -> str | None:
        """What the ledger held for this release, or else for the latest earlier release with one
        (``read``: the bug's status, or its workaround's)."""
        if version in self.held and (found := read(ledger_io.verdicts_of(self.releases[version], bug_id))):
            return found
        positions, values = self._index(bug_id, read)
        earlier = bisect_left(positions, self.position.get(version, 0))
        return values[earlier - 1] if earlier else None

    def _index(self, bug_id: str, read: Callable[[dict[str, Any]], str | None]) -> tuple[list[int], list[str]]:
        """The positions, in version order, of the releases where ``read`` finds something, and what."""
        key = (bug_id, read)
        if key not in self._indexed:
            found = sorted(
                (self.position[version], value)
                for version, entry in self.releases.items()
                if (value := read(ledger_io.verdicts_of(entry, bug_id)))
            )
            self._indexed[key] = ([p for p, _ in found], [v for _, v in found])
        return self._indexed[key]
