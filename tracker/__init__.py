"""The tooling run from a checkout: the scheduled upstream check, the docs it generates, the matrix.

Its modules run with ``python -m tracker.NAME`` from the clone's root; in an environment without
what they import, each says so in one sentence (exit 2) rather than with the traceback of the first
import that fails."""

import sys

from repro.requirements import unmet

_missing = unmet(("packaging", "requests", "urllib3"))
if _missing:
    print(f"tracker: error: {_missing}", file=sys.stderr)
    raise SystemExit(2)
