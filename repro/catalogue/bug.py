"""What the catalogue knows about one upstream bug, as data, and the helpers its recognisers share.

A recogniser looks at one oracle result (a scenario run on a ScriptModule subclass next to its
eager twin) and says whether this bug explains how the ScriptModule departed: by the bug's own
error text, or by a named difference in the recorded hook calls. No recogniser accepts a
departure just because it is one: each is tested against the other bugs' departures.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from repro.catalogue.fixes import Fixes
from repro.source_checks import Check, Fingerprinted, Reference, StaticVerdict, Trees, static_verdict
from repro.traits import EAGER, PLAIN_FORWARD, SCRIPT_METHOD, SCRIPTED, Traits
from repro.vocabulary import StaticStatus, Verdict

if TYPE_CHECKING:  # the engine imports torch; the tracker reads signatures without it
    from repro.engine.oracle import ScenarioResult

STYLES = ("script_method", "plain_forward")  # ScriptModule subclasses: repro.engine.models.STYLES
# The model shapes a ScriptModule subclass is tested in (repro.engine.models.MODELS); a torch.jit.script-ed
# child of an eager model is the shape "scripted child", in the style "torch.jit.script".
SUBCLASS_SHAPES = (
    "flat",
    "child",
    "child first",
    "child between",
    "child last",
    "several children",
    "buffers only",
    "two inputs",
    "non-tensor input",
    "in eager parent",
    "in eager parent, with child",
    "subclass child",
    "two deep",
    "three deep",
    "raising",
)
# What each shape is, in words a page can print without importing torch (repro.engine.models builds
# them; a test keeps the two in step): a condition "on child between" means exactly this model.
SHAPE_WORDS = {
    "flat": "its own weight and bias; forward F.linear(x, weight, bias)",
    "child": "an nn.Linear child; forward linear(x)",
    "child first": "an nn.Linear child; forward linear(x) * 2 + 1 (eager ops after the child)",
    "child between": "an nn.Linear child; forward tanh(linear(x * 0.5)) + 1 (eager ops before and after)",
    "child last": "an nn.Linear child; forward linear(x * 2 - 1) (eager ops before the child)",
    "several children": "children linear, act (ReLU) and head (Linear); forward head(act(linear(x)))",
    "buffers only": "buffers scale and steps, no parameter; forward x @ scale + steps",
    "two inputs": "as flat, forward F.linear(x, weight, bias) * y with a second tensor y",
    "non-tensor input": "as flat, forward F.linear(x, weight, bias) * scale with a float scale",
    "in eager parent": "the subclass (as flat) is the child inner of an eager nn.Module",
    "in eager parent, with child": "the subclass (as child) is the child inner of an eager nn.Module",
    "scripted child": "torch.jit.script of the eager flat model is the child inner of an eager nn.Module",
    "subclass child": "forward inner(x); inner is a subclass as flat, with a script_method forward",
    "two deep": "forward inner(x); inner is a subclass as child, with a script_method forward",
    "three deep": "forward inner(x); inner is a subclass as two deep (script_method forwards inside)",
    "raising": "as flat, and forward raises ValueError for an input summing below -100",
    "hooked in __init__, before children": "as child; __init__ registers a forward hook and pre-hook, then the child",
    "hooked in __init__, after children": (
        "as child; __init__ sets the child, then registers a forward hook and pre-hook"
    ),
    "non-persistent buffer child": (
        "as child, and an eager child scaling by a buffer registered with persistent=False"
    ),
}

# Each named shape's traits (``repro.traits``), in a subclass style: what its scope predicates read.
# Per shape: whether the subclass is the child of an eager parent; its child ("", "linear", "subclass",
# "subclass with linear", "linear and eager": an nn.Linear and an eager module of a user class);
# whether its forward runs two operations or more; whether it raises; whether its __init__ registers
# hooks.
_SHAPES = {
    "flat": (False, "", False, False, False),
    "child": (False, "linear", False, False, False),
    "child first": (False, "linear", True, False, False),
    "child between": (False, "linear", True, False, False),
    "child last": (False, "linear", True, False, False),
    "several children": (False, "linear", True, False, False),
    "buffers only": (False, "", True, False, False),
    "two inputs": (False, "", True, False, False),
    "non-tensor input": (False, "", True, False, False),
    "in eager parent": (True, "", False, False, False),
    "in eager parent, with child": (True, "linear", False, False, False),
    "subclass child": (False, "subclass", False, False, False),
    "two deep": (False, "subclass with linear", False, False, False),
    "three deep": (False, "subclass with linear", False, False, False),
    "raising": (False, "", False, True, False),
    "hooked in __init__, before children": (False, "linear", True, False, True),  # hooks compile with forward
    "hooked in __init__, after children": (False, "linear", True, False, True),
    "non-persistent buffer child": (False, "linear and eager", True, False, False),
}


def shape_traits(shape: str, style: str) -> Traits:
    """The traits of a named shape in a style (``scripted child``: ``torch.jit.script``, eager parent)."""
    if shape == "scripted child":  # torch.jit.script of the eager flat model, inside an eager parent
        return Traits(
            root=EAGER,
            styles=(EAGER, SCRIPTED),
            depth=2,
            subclass=False,
            compiled=True,
            inside_torchscript=False,
            subclass_inside_torchscript=False,
            linear_in_script_module=False,
            raises_compiled=False,
            compiled_ops=False,
            init_hooks_plain_forward=False,
            nonpersistent_buffer_compiled=False,
            batch_is_features=True,
        )
    in_parent, child, ops, raises, hooked = _SHAPES[shape]
    compiled = style == SCRIPT_METHOD  # the subclass's own forward
    # nested subclasses have script_method forwards; each child of a subclass is compiled
    styles = {style, SCRIPT_METHOD} if child.startswith("subclass") else {style}
    eager_level = in_parent or child.endswith("eager")
    return Traits(
        root=EAGER if in_parent else style,
        styles=tuple(sorted(styles | ({EAGER} if eager_level else set()))),
        depth=1 + eager_level + (child.startswith("subclass")) + (shape == "three deep"),
        subclass=True,
        compiled=compiled or bool(child),
        inside_torchscript=(compiled and bool(child)) or child == "subclass with linear",
        # three deep: its inner subclass's script_method forward calls the innermost subclass
        subclass_inside_torchscript=(compiled and child.startswith("subclass")) or shape == "three deep",
        linear_in_script_module=child.startswith("linear") or child == "subclass with linear",
        raises_compiled=compiled and raises,
        compiled_ops=compiled and ops,
        init_hooks_plain_forward=hooked and style == PLAIN_FORWARD,
        nonpersistent_buffer_compiled=shape == "non-persistent buffer child",  # its eager child's
        batch_is_features=True,  # scenarios run at 2 x 2 (repro.engine.models.SIZE)
    )


# Groups of shapes the scopes below are written in (what exploration measured them on).
WITH_CHILDREN = ("child", "child first", "child between", "child last", "several children")
NESTED = ("subclass child", "two deep", "three deep")
# The shapes where the subclass is the child of an eager parent, and where it is the model a scenario builds.
IN_EAGER_PARENT = tuple(shape for shape in SUBCLASS_SHAPES if shape.startswith("in eager parent"))
ROOTS = tuple(shape for shape in SUBCLASS_SHAPES if shape not in IN_EAGER_PARENT)
Scope = tuple[tuple[str, str, str], ...]  # (shape, style, scenario name or "" for each of its scenarios)


def scope_pairs(shapes: tuple[str, ...], styles: tuple[str, ...] = STYLES) -> tuple[tuple[str, str], ...]:
    """Every (shape, style) pair of these: where a workaround declares it does not work."""
    return tuple((shape, style) for shape in shapes for style in styles)


def scope(shapes: tuple[str, ...], styles: tuple[str, ...] = STYLES, case: str = "") -> Scope:
    """Every pair of these shapes and styles, for one scenario (``case``) or all the bug's: a bug's
    scope is a sum of such products."""
    return tuple((shape, style, case) for shape in shapes for style in styles)


@dataclass(frozen=True)
class Workaround:
    """What a user can do today, proven only by running the bug's whole scope with it in force and
    matching eager (``repro.proof``); ``apply`` None means there is none, and ``tried`` says why."""

    name: str  # a few words a support table cell can carry ("works with workaround NAME"); "none" where none
    summary: str  # one line: what to call or change
    usage: str  # a few lines of code or one sentence, as docs/downstream.md and --explain show it
    apply: Callable[[], AbstractContextManager[Any]] | None  # puts it in force for the oracle's scenarios
    style: str = ""  # the forward the change writes ("plain_forward" or "script_method"); the scope runs in it
    # the scenario (its key) that does what the bug's ``cases`` do the workaround's way (hooks registered in
    # __init__, not after construction): the proof runs it, on its own shapes in the bug's styles, in their place
    instead: str = ""
    tried: tuple[str, ...] = ()  # what else was tried on the installed torch, and how it failed
    in_torch_terms: str = ""  # the same for an issue body, whose readers lack this project: torch's names only
    # (shape, style) pairs of the scope where it does not work, measured by the proof, and why
    limits: tuple[tuple[str, str], ...] = ()
    limits_why: str = ""
    # the documented switches that together are the workaround, as the explorer's steps name them
    # (``repro.explore.steps.Switching.api``): a departure the bug would explain with all of them on is
    # the workaround's, not the bug's
    switches: tuple[str, ...] = ()


def always_applies(trees: Trees) -> str | None:
    """``Bug.applies`` of a bug whose APIs every torch with TorchScript has (its scenarios' needs still
    make it not-applicable at run time where an API is missing)."""
    return None


@dataclass(frozen=True)
class Departure:
    """One departure of the bug as the oracle recorded it (torch 2.13.0, CPU): the example its
    recogniser must know, and what tests feed the report, the support table and the issue body."""

    scenario: str  # the scenario's key
    style: str
    verdict: str  # "raises" or "differs"
    detail: str = ""
    scripted: Mapping[str, Any] = field(default_factory=lambda: {"hook calls": []})  # the ScriptModule's side
    eager: Mapping[str, Any] = field(default_factory=lambda: {"hook calls": []})
    model: str = ""  # the shape it ran on, where not the scenario's own
    label: str = ""  # what tells a second example of the bug apart ("silenced")


@dataclass(frozen=True, kw_only=True)
class Bug:
    id: str
    number: int  # its place in the catalogue (1: the first catalogued); every list of bugs follows it
    title: str
    headline: str  # a few words for the README's table of bugs (generated: tracker/catalogue_docs.py)
    upstream: str  # "pytorch/pytorch#N", or "not reported yet"
    apis: tuple[str, ...]  # a scenario is in scope when it calls one of these
    scope: Scope  # the (shape, style, case) it affects, as exploration over every declared shape measured
    symptom: str  # how it shows, in one line
    departures: tuple[Departure, ...]  # at least one, measured: the first is its example
    recognise: Callable[[ScenarioResult], bool]
    reach: Callable[[Traits], bool]  # its scope over models' traits: true on every named shape of ``scope``
    pieces: tuple[Check, ...] = ()  # the static signature: every piece intact means present
    fingerprinted: Fingerprinted = ()  # what must stay unchanged from the latest release confirmed present
    applies: Callable[[Trees], str | None] = always_applies  # names the missing API where the bug cannot exist
    paste: str  # the paste-ready script: at most 25 lines, torch only, ends in the error or a failing assert
    paste_ends: str  # how the last line ``paste`` prints while the bug is present begins (its error or assert)
    explanation: str  # the mechanism, in prose (its module's docstring); file:line evidence comes from ``static``
    no_static: str = ""  # why the bug has no static signature (``pieces`` empty): the tracker confirms it dynamically
    cases: tuple[str, ...] = ()  # the scenario names of its APIs it affects, where it affects only some
    needs: tuple[str, ...] = ()  # dotted torch names ``paste`` needs: a torch without one cannot test it (125)
    errors: tuple[str, ...] = ()  # error text that ends ``paste`` when the bug shows (else a failing ``assert``)
    workaround: Workaround | None = None  # what users can do today (every catalogued bug declares one)
    # The cause as numbered steps, measured on the installed torch (imports it), given the static
    # signature's evidence lines (file:line); C++ pieces cited by path and upstream commit.
    root_cause: Callable[[list[str]], list[str]] | None = None
    reported: str = ""  # how an issue body cites earlier reports; "" for "Not reported before, as far as we know."
    # candidate fixes and the upstream patch (--candidates, --patch): every bug has one, a fix or, where the
    # cause is C++, a loud one
    fixes: Fixes

    @property
    def styles(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(style for _, style, _ in self.scope))

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(shape for shape, _, _ in self.scope))

    def covers(self, result: ScenarioResult) -> bool:
        """Is this scenario run in the bug's scope (one of its APIs on one of its (shape, style) pairs,
        for every scenario or this one; one of its ``cases``, where it names some)?"""
        shape, style, name = result.scenario.model, result.style, result.scenario.name
        if result.scenario.traits is not None:  # a generated model: the scope's predicate over its traits
            return self.reach(result.scenario.traits) and bool(result.scenario.apis & set(self.apis))
        return (
            ((shape, style, "") in self.scope or (shape, style, name) in self.scope)
            and bool(result.scenario.apis & set(self.apis))
            and (not self.cases or name in self.cases)
        )

    def worked_around(self, result: ScenarioResult) -> bool:
        """Did the run have every switch of the bug's workaround on (a generated case's steps switch
        them on)? Then what the bug would explain there is the workaround's failure, not the bug."""
        switches = self.workaround.switches if self.workaround else ()
        generated = result.scenario.traits is not None  # a named scenario that calls one switches nothing off
        return generated and bool(switches) and set(switches) <= set(result.scenario.apis)

    def refuses(self, result: ScenarioResult) -> bool:
        """Does this run raise the bug's loud upstream patch's refusal? On a torch that merged the patch,
        the bug's silent departure has become that clear error, still not eager's behaviour; outside its
        scope the patch's words may replace another refusal's (a patch that words every addition's
        refusal alike). Only the runs in its scope decide the bug's status."""
        return result.verdict == Verdict.RAISES and self.patch_refused(result.detail)

    def patch_refused(self, text: str) -> bool:
        """Does ``text`` (a run's detail, an exception's message) carry its loud upstream patch's refusal?"""
        refusal = self.fixes.patch.refusal
        return bool(refusal) and refusal in text

    def static(self, sources: Mapping[str, str | None], reference: Reference | None = None) -> StaticVerdict:
        if not self.pieces:  # nothing in the probed files decides it: "unknown" is never a status change
            return StaticVerdict(StaticStatus.UNKNOWN, [f"no static signature: {self.no_static}"])
        return static_verdict(sources, self.pieces, self.applies, self.fingerprinted, reference)


def routed(*names: str) -> Callable[[], AbstractContextManager[Any]]:
    """``Workaround.apply`` for functions of ``repro.workaround`` that users call in place of the
    ``nn.Module`` methods ``names``: the scenarios, which call the methods, reach the functions."""

    def apply() -> AbstractContextManager[Any]:
        from repro import workaround  # imports torch: only when a proof runs

        return workaround.routed(*names)

    return apply


def unchanged() -> AbstractContextManager[Any]:
    """``Workaround.apply`` of a workaround that is only a change of style (its ``style``): nothing else
    is put in force."""
    return contextlib.nullcontext()


def global_backward_hooks_allowed() -> AbstractContextManager[Any]:
    """``Workaround.apply`` of ``repro.workaround.allow_global_backward_hooks``."""
    from repro import workaround  # imports torch: only when a proof runs

    return workaround.allow_global_backward_hooks()


def traits_of(result: ScenarioResult) -> Traits | None:
    """The traits of the model a run was on: a generated model's, or its named shape's in its style
    (None for a shape no scope is written on)."""
    if result.scenario.traits is not None:
        return result.scenario.traits
    if result.scenario.model != "scripted child" and result.scenario.model not in _SHAPES:
        return None
    return shape_traits(result.scenario.model, result.style)


def raised(result: ScenarioResult, *fragments: str) -> bool:
    """The ScriptModule raised an error whose text holds one of ``fragments``, where eager raised none."""
    return result.verdict == Verdict.RAISES and any(f in result.detail for f in fragments)


def raised_instead(result: ScenarioResult, *fragments: str) -> bool:
    """``raised``, or the ScriptModule raised it where eager raised another error (the explorer records
    both as ``raised``): an error that comes first, whatever the call would have raised."""
    mine, theirs = (side.observation.get("raised") if side else None for side in (result.scripted, result.eager))
    instead = result.verdict == Verdict.DIFFERS and isinstance(mine, str) and mine != theirs
    return raised(result, *fragments) or (instead and any(f in str(mine) for f in fragments))


def calls(side: Any) -> list[list[Any]]:
    return side.observation.get("hook calls", []) if side else []


def fewer_calls(result: ScenarioResult) -> bool:
    """Both ran, and the ScriptModule recorded only some of eager's hook calls, in eager's order (on a
    generated model, only some of the hooks eager's calls ran)."""
    scripted, eager = calls(result.scripted), calls(result.eager)
    if result.scenario.traits is not None:  # generated: a skipped hook that changes its value changes every
        scripted, eager = [call[0] for call in scripted], [call[0] for call in eager]  # later one: by label
    if result.verdict != Verdict.DIFFERS or len(scripted) >= len(eager):
        return False
    remaining = iter(eager)
    return all(any(call == other for other in remaining) for call in scripted)
