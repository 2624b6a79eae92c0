"""Candidate fixes for the bug, applied to the imported torch in memory only.

Each ``apply`` function patches the running process (never site-packages), so it must
run before any ScriptModule subclass is instantiated and in a process of its own. The
oracle then judges whether the candidate makes every scenario match eager or merely
silences the error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

FLAG = "_is_full_backward_hook"


def add_flag_to_ignored_attributes() -> None:
    """The one-line fix most people propose: keep the flag out of the C++ class."""
    import torch.jit._recursive

    if FLAG not in torch.jit._recursive.ignored_attributes:
        torch.jit._recursive.ignored_attributes.append(FLAG)


def keep_flag_on_wrapper() -> None:
    """Ignore the flag when scripting *and* store it on the Python wrapper, where
    ``Module._get_backward_hooks`` reads it back."""
    import torch.jit._script

    add_flag_to_ignored_attributes()
    script_module = torch.jit._script.ScriptModule
    forward_to_inner = script_module.__setattr__

    def __setattr__(self, attr, value):
        if attr == FLAG:
            object.__setattr__(self, attr, value)
        else:
            forward_to_inner(self, attr, value)

    script_module.__setattr__ = __setattr__


@dataclass(frozen=True)
class Candidate:
    name: str
    summary: str
    apply: Callable[[], None]


CANDIDATES = {
    c.name: c
    for c in (
        Candidate(
            "ignored-attributes",
            "add '_is_full_backward_hook' to torch.jit._recursive.ignored_attributes",
            add_flag_to_ignored_attributes,
        ),
        Candidate(
            "keep-flag-on-wrapper",
            "ignored_attributes plus ScriptModule.__setattr__ keeping the flag on the wrapper",
            keep_flag_on_wrapper,
        ),
    )
}
