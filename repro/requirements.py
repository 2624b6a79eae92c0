"""What ``python -m repro`` needs installed, checked before anything imports it: in an environment without
them, one sentence naming them all, instead of the traceback of the first import that fails."""

from __future__ import annotations

import importlib.util
import sys

# what python -m repro imports (requests and urllib3: the tracker's); tomli reads bug.toml before 3.11
NEEDED = ("torch", "packaging", *(("tomli",) if sys.version_info < (3, 11) else ()))
EXPLORING = ("hypothesis==6.170.27",)  # what --explore needs too; pinned (pyproject's explore extra): a seed is one run


def unmet(needed: tuple[str, ...] = NEEDED, how: str = "pip install -e .") -> str:
    """One sentence naming what is not installed for this interpreter, and ``how`` to install it, or ""
    where all is."""
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if not missing:
        return ""
    return f"not installed here: {', '.join(missing)} ({how})"
