"""The bug's chain of cause, measured on the installed torch at run time, never hard-coded.

Two kinds of evidence: what the scripted module really is (the type its C++ class gives
the flag, whether the Python wrapper still holds the flag), and where the installed
sources put the pieces (``source_checks``, with file and line).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

from repro.catalogue.measure import SCRIPT_INIT
from repro.source_checks import FLAG, StaticVerdict, analyse, installed_sources, loaded_sources

if TYPE_CHECKING:
    from repro.catalogue.bug import Bug

WRAPPER = {True: "still holds", False: "no longer holds", None: "may or may not hold (not measured)"}


@dataclass(frozen=True)
class RootCause:
    flag_type: str  # the C++ attribute's type, or why it could not be read
    flag_on_wrapper: bool | None  # does the Python wrapper still hold the flag after scripting?
    static: StaticVerdict  # evidence lines: ignored_attributes, Module assignment, __setattr__

    def chain(self) -> list[str]:
        """The cause as numbered steps a reader can check against the cited lines."""
        ignored, assigns, forwards = (self.static.evidence + ["?", "?", "?"])[:3]
        return [
            f"nn.Module.__init__ sets self.{FLAG} = None on every module.",
            f"When a ScriptModule subclass finishes __init__, it is compiled and every instance attribute "
            f"not in torch.jit._recursive.ignored_attributes becomes an attribute of the C++ class "
            f"({ignored}). Measured here, {FLAG} is typed {self.flag_type} there, and the wrapper "
            f"{WRAPPER[self.flag_on_wrapper]} a Python copy.",
            f"register_full_backward_hook assigns True to the flag ({assigns}); "
            f"ScriptModule.__setattr__ forwards the assignment to the inner RecursiveScriptModule "
            f"({forwards}), whose C++ setter cannot cast True to {self.flag_type} ({SCRIPT_INIT}, "
            "ScriptObject setattr; register_backward_hook assigns False: same error).",
            "Module._get_backward_hooks reads the flag back on the outer module when it is called, "
            "so a fix must leave the wrapper reading True: one that only keeps the flag out of the "
            "C++ class silences the error while no backward hook ever runs.",
        ]


def explain() -> RootCause:
    """Measure the chain on the installed torch (call after ``environment.import_torch``)."""
    static = analyse(loaded_sources())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from repro.engine.models import build_script

            model = build_script("flat", "plain_forward", "later", "cpu")
        # a ScriptModule's inner module and its C++ type are untyped in torch's stubs
        attributes = model._actual_script_module._concrete_type.get_attributes()  # type: ignore[union-attr,operator]
    except Exception as err:  # TorchScript disabled or raising: say so instead of guessing
        return RootCause(f"unknown (TorchScript unusable: {type(err).__name__}: {err})", None, static)
    if FLAG in attributes:
        flag_type = str(attributes[FLAG][0])
    else:
        flag_type = "nothing (not an attribute of the C++ class)"
    return RootCause(flag_type, FLAG in model.__dict__, static)


def steps(bug: Bug) -> list[str]:
    """``bug``'s cause as numbered steps, measured on the installed torch from its catalogue module; a
    bug without one gives its static signature's evidence, file:line each."""
    evidence = bug.static(installed_sources()).evidence
    return bug.root_cause(evidence) if bug.root_cause else evidence
