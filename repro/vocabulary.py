"""The words a run's results are told in, one type per idea: what a scenario run was judged (``Verdict``),
what a bug is on this torch (``Status``), what a whole run concludes (``Outcome``), what a workaround's
proof found (``ProofStatus``), what a static signature says (``StaticStatus``) and which runs include a
scenario (``Tier``).

Each member is a ``str`` equal to its value, and prints, formats and serialises (JSON) as that value:
reports, the ledger and downstream tests read the same words as before these types existed. Torch-free,
at the bottom of the layers: the engine, the catalogue and the report all speak it.
"""

from __future__ import annotations

from enum import Enum


class Word(str, Enum):
    """A word that is its value wherever it is printed or formatted."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Verdict(Word):
    MATCH = "match"  # both twins recorded the same observation
    RAISES = "raises"  # the ScriptModule raised, eager did not
    DIFFERS = "differs"  # both ran, observations differ
    REFUSED = "refused"  # raised or differed as TorchScript's design (or an undocumented refusal) says
    UNAVAILABLE = "unavailable"  # this torch lacks an API or keyword the scenario needs
    NOT_RUN = "not-run"  # it needs an accelerator this machine lacks
    ERROR = "error"  # the eager twin itself raised: the scenario is not valid on this torch


DEPARTURES = (Verdict.RAISES, Verdict.DIFFERS, Verdict.ERROR)
NOT_JUDGED = (Verdict.UNAVAILABLE, Verdict.NOT_RUN)  # this torch lacks the API, or this machine the accelerator


class Status(Word):
    PRESENT = "present"
    FIXED = "fixed"
    INCOMPLETE_FIX = "incomplete-fix"  # its own symptom gone, an unexplained departure in its scope
    NOT_APPLICABLE = "not-applicable"  # this torch lacks every API it needs
    SKIPPED = "skipped"  # its scenarios were not run (the default run leaves some out)
    CANNOT_TEST = "cannot-test"  # TorchScript itself is unusable


class StaticStatus(Word):
    """What a bug's static signature over a release's sources says (the tracker's probe)."""

    PRESENT = "present"  # every piece intact
    CHANGED = "changed"  # a piece differs: maybe fixed, to be confirmed by running it
    REMOVED = "removed"  # TorchScript's entry points are gone
    UNKNOWN = "unknown"  # the sources cannot say (missing, unparsable, or no signature)
    NOT_APPLICABLE = "not-applicable"  # the release lacks an API the bug needs


class Outcome(Word):
    PRESENT = "present"
    FIXED = "fixed"
    DIFFERENT = "different"  # a departure no catalogued bug explains
    CANNOT_TEST = "cannot-test"


class ProofStatus(Word):
    WORKS = "works"
    WORKS_WITH_LIMITS = "works-with-limits"
    DOES_NOT_WORK = "does-not-work"
    NOT_MEASURED = "not-measured"
    NONE = "none"  # the bug has no workaround to prove


class WorkaroundVerdict(Word):
    """What a workaround does, judged as a fix is: every call of every run against the eager twin."""

    HOLDS = "holds"  # every judged call matches eager (or departs only by TorchScript's design)
    LOUD = "loud"  # some call still raises where eager does not, and none departs silently
    SILENTLY_WRONG = "silently wrong"  # some value, gradient, dtype or hook call differs without an error


class FixVerdict(Word):
    """What a candidate fix does to a bug, judged by the scenario runs made with it in force."""

    FIX = "fix"  # every judged run matches eager
    LOUD = "loud"  # every run still departing raises the candidate's refusal: silent became a clear error
    INCOMPLETE = "incomplete"  # runs still depart otherwise
    HIDES_THE_ERROR = "hides the error"  # the bug's own error is gone, and runs depart silently instead
    CANNOT_JUDGE = "cannot judge"  # nothing judged: the process gave no report, or TorchScript is unusable


class Tier(Word):
    DEFAULT = "default"  # in every run
    VARIANT = "variant"  # --slow, --support-table, or --bug for a bug's own
    SLOW = "slow"  # the same, and they load dynamo or gloo: seconds each
