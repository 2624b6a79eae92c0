"""Entry point for ``python -m repro`` and the ``scriptmodule-hook-repro`` console script."""

from __future__ import annotations

import os
import sys

from repro.requirements import unmet


def entry(prog: str = "python -m repro") -> None:
    """What is not installed is one sentence, exit 2, before an import of it fails; Ctrl-C while the
    modules load is one line, exit 130, as it is once they have."""
    problem = unmet()
    if problem:
        print(f"{prog}: error: {problem}", file=sys.stderr)
        raise SystemExit(2)
    try:
        from repro.cli import main
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    from repro.output import leave

    leave(main(prog=prog))


def console() -> None:
    """The console script: usage and errors name the command the user typed."""
    entry(os.path.basename(sys.argv[0]))


if __name__ == "__main__":
    entry()
