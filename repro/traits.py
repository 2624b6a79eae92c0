"""What a model is, in the words a bug's scope is written in: for the catalogue's named shapes and the
explorer's generated models alike.

A catalogued bug's scope was measured on named shapes ("child between", "two deep"); a generated
model has no name. Both are described by the same ``Traits`` (the catalogue declares a named shape's,
``repro.explore.generate`` computes a generated model's), and each bug states where it can show as a
predicate over them (``Bug.reach``). A test checks that every predicate holds on every named shape
of the bug's measured scope, so a predicate is the measured scope, or a wider one written down.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

# A module's style: a ScriptModule subclass's two forwards, an eager module compiled by
# torch.jit.script, or an eager module.
SCRIPT_METHOD, PLAIN_FORWARD, SCRIPTED, EAGER = "script_method", "plain_forward", "torch.jit.script", "eager"
GENERATED = "generated"  # the shape (Scenario.model) of the explorer's models: they have no name


@dataclass(frozen=True)
class Traits:
    """One model, as the scopes read it. "Compiled" code is TorchScript's: a ``script_method`` forward,
    a ``torch.jit.script``-ed module, and any child a ScriptModule holds (TorchScript compiles it)."""

    root: str  # the style of the module a scenario builds and calls
    styles: tuple[str, ...]  # every style in the model, sorted
    depth: int  # levels of user classes (an nn.Linear child is no level)
    subclass: bool  # a ScriptModule subclass somewhere in the model
    compiled: bool  # some module's forward runs compiled
    inside_torchscript: bool  # a module is called by a compiled forward (no Python __call__, no hooks)
    subclass_inside_torchscript: bool  # ... and that module is a ScriptModule subclass
    linear_in_script_module: bool  # an nn.Linear is a child of a ScriptModule (a subclass, or compiled code)
    raises_compiled: bool  # a compiled forward raises a Python exception on some input
    compiled_ops: bool  # a compiled forward runs two operations or more (children's calls, compiled hooks)
    init_hooks_plain_forward: bool  # a subclass with a plain forward registers hooks in its __init__
    # a module TorchScript compiles holds a buffer registered with persistent=False (a subclass refuses one)
    nonpersistent_buffer_compiled: bool
    batch_is_features: bool  # the input's batch size equals its feature size

    def as_dict(self) -> dict[str, object]:
        return asdict(self)
