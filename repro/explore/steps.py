"""What is done to a generated model, drawn as a list: hooks registered, calls made under a mode, the
module handed to copies and state dicts, attributes assigned. ``perform`` does one step on one twin and
writes what it observed into the twin's ``Recorder`` under the step's number, so that the two twins'
records compare step by step.

Every step is written as code too (``Step.code``): the paste-ready script of a departure is the model's
text and these lines.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:  # Hypothesis is needed to draw, not to run a case (the report and formats import these)
    from hypothesis import strategies as st


class HookKind(Enum):
    """A hook API, and how it is registered (the text after ``m.``; for a workaround's function, the
    call on the module ``t``)."""

    FORWARD_PRE = "register_forward_pre_hook(h)"
    FORWARD_PRE_PREPEND = "register_forward_pre_hook(h, prepend=True)"
    FORWARD_PRE_KWARGS = "register_forward_pre_hook(h, with_kwargs=True)"
    FORWARD = "register_forward_hook(h)"
    FORWARD_KWARGS = "register_forward_hook(h, with_kwargs=True)"
    FORWARD_ALWAYS = "register_forward_hook(h, always_call=True)"
    FULL_BACKWARD = "register_full_backward_hook(h)"
    FULL_BACKWARD_PRE = "register_full_backward_pre_hook(h)"
    BACKWARD = "register_backward_hook(h)"
    GLOBAL_FORWARD_PRE = "torch.nn.modules.module.register_module_forward_pre_hook(h)"
    GLOBAL_FORWARD = "torch.nn.modules.module.register_module_forward_hook(h)"
    GLOBAL_FULL_BACKWARD = "torch.nn.modules.module.register_module_full_backward_hook(h)"
    WORKAROUND_FULL_BACKWARD = "repro.workaround.register_full_backward_hook(t, h)"
    WORKAROUND_BACKWARD = "repro.workaround.register_backward_hook(t, h)"

    @property
    def api(self) -> str:
        """The API's name as the support table names it; a workaround's by its whole name, so that no
        catalogued bug (whose scenarios name torch's APIs) explains a departure of the workaround."""
        name = self.value.split("(")[0]
        return name if self.is_workaround else name.rsplit(".", 1)[-1]

    @property
    def is_global(self) -> bool:
        return self.value.startswith("torch.")

    @property
    def is_workaround(self) -> bool:
        return self.value.startswith("repro.workaround.")

    @property
    def stands_for(self) -> str:
        """The hook API a workaround's function registers with (its own name's last part)."""
        return self.api.rsplit(".", 1)[-1]


class Mode(Enum):
    """How a call is made: in a grad mode or autocast, through checkpoint, or through a ``torch.func``
    transform (run as written here; ``y`` is what it returns)."""

    PLAIN = "y = m(x)"
    NO_GRAD = "with torch.no_grad():\n    y = m(x)"
    INFERENCE = "with torch.inference_mode():\n    y = m(x)"
    AUTOCAST = 'with torch.autocast("cpu", dtype=torch.bfloat16):\n    y = m(x)'
    CHECKPOINT = "y = torch.utils.checkpoint.checkpoint(m, x, use_reentrant=False)"
    CHECKPOINT_REENTRANT = "y = torch.utils.checkpoint.checkpoint(m, x, use_reentrant=True)"
    FUNCTIONAL_CALL = "y = torch.func.functional_call(m, dict(m.named_parameters()), (x,))"
    VMAP = "y = torch.func.vmap(m)(x.unsqueeze(0))[0]"  # a batch of one model input
    JVP = "y = torch.func.jvp(m, (x.detach(),), (torch.ones_like(x),))[1]"  # the tangent out
    GRAD = "y = torch.func.grad(lambda x: m(x).sum())(x)"  # the input's gradient


TRANSFORMS = (Mode.FUNCTIONAL_CALL, Mode.VMAP, Mode.JVP, Mode.GRAD)


class Handing(Enum):
    """What the model is handed to. A copy is the model from then on; ``Module.compile`` compiles later
    calls; the last six are run as written here, on an input ``x``, and leave the model as it was
    (``counting`` is a torch.compile backend that notes each graph it is given, never inductor)."""

    COPY = "m = copy.copy(m)"
    DEEPCOPY = "m = copy.deepcopy(m)"
    STATE_DICT = "m.load_state_dict(m.state_dict())"
    EVAL = "m.eval()"
    TRAIN = "m.train()"
    COMPILE = "m.compile(backend=counting)"
    TORCH_COMPILE = "y = torch.compile(m, backend=counting)(x)"
    EXPORT = "y = torch.export.export(m, (x,)).module()(x)"
    JIT_SAVE = (
        "buffer = io.BytesIO()\n"
        "torch.jit.save(m if isinstance(m, torch.jit.ScriptModule) else torch.jit.script(m), buffer)\n"
        "buffer.seek(0)\n"
        "y = torch.jit.load(buffer)(x)"
    )
    QUANTIZE = "q = torch.ao.quantization.quantize_dynamic(m, {torch.nn.Linear}, dtype=torch.qint8)\ny = q(x)"
    DOUBLE = "m.double()\ny = m(x.double())\nm.float()"
    WORKAROUND_COPY = "m = repro.workaround.shallow_copy(m)"  # a workaround's function in place of copy.copy
    WORKAROUND_DEEPCOPY = "m = repro.workaround.deepcopy(m)"  # and of copy.deepcopy


COPIES = (Handing.COPY, Handing.DEEPCOPY, Handing.WORKAROUND_COPY, Handing.WORKAROUND_DEEPCOPY)


RUN_AS_WRITTEN = (Handing.TORCH_COMPILE, Handing.EXPORT, Handing.JIT_SAVE, Handing.QUANTIZE, Handing.DOUBLE)
CALLING = (Handing.TORCH_COMPILE, Handing.DOUBLE)  # of those, the ones that call the model's own forward
HANDED = {  # one line for those whose code is longer
    Handing.TORCH_COMPILE: "torch.compile(m), called once",
    Handing.EXPORT: "torch.export.export(m), its module called once",
    Handing.JIT_SAVE: "torch.jit.save(m) and torch.jit.load, the loaded module called once",
    Handing.QUANTIZE: "torch.ao.quantization.quantize_dynamic(m), the result called once",
    Handing.DOUBLE: "m.double(), called once on a float64 input, then m.float()",
}
# dynamo and export take a second or more where a call takes milliseconds: drawn a tenth as often
SLOW_HANDINGS = (Handing.COMPILE, Handing.TORCH_COMPILE, Handing.EXPORT, Handing.JIT_SAVE, Handing.QUANTIZE)


class Assignment(Enum):
    """An attribute assigned on one module of the model (``t``)."""

    PLAIN = "t.extra = 3"
    BUFFER = 't.register_buffer("added", torch.ones(FEATURES))'
    PARAMETER = "t.added = torch.nn.Parameter(torch.ones(FEATURES))"
    CHILD = "t.added_child = torch.nn.Linear(FEATURES, FEATURES)"
    NONE = "t.b0 = None"
    TRAINING = "t.training = False"


class Switching(Enum):
    """A switch a workaround documents, on from its step until the case ends (the case switches it off
    again: it is process-wide); the text is the script's line (``switches`` is its ``ExitStack``)."""

    UNOPTIMIZED = "switches.enter_context(torch.jit.optimized_execution(False))"
    NO_EARLY_STOP = "switches.enter_context(torch.utils.checkpoint.set_checkpoint_early_stop(False))"
    GLOBAL_BACKWARD_HOOKS_ALLOWED = "switches.enter_context(repro.workaround.allow_global_backward_hooks())"

    @property
    def switched(self) -> str:
        """The call that switches it: ``torch.jit.optimized_execution(False)``."""
        return self.value.removeprefix("switches.enter_context(")[:-1]

    @property
    def api(self) -> str:
        """What is switched, as APIs are named (no arguments): ``torch.jit.optimized_execution``."""
        return self.switched.split("(")[0]

    @property
    def before_calls(self) -> bool:
        """Whether it works only when on before the model's first call: TorchScript's executor
        optimizes a compiled forward on its first calls and keeps what it built (measured on torch
        2.13.0: switched on after three calls, no_grad's output still requires grad)."""
        return self is Switching.UNOPTIMIZED


@dataclass(frozen=True)
class Hook:
    kind: HookKind
    where: int  # an index into the model's module paths (modulo their number)
    changes: bool  # the hook changes what it is given (forward and pre-hooks: doubles it)


@dataclass(frozen=True)
class Call:
    mode: Mode
    backward: bool
    negative: bool  # inputs scaled by -100: a body that raises below -50 raises


@dataclass(frozen=True)
class Hand:
    to: Handing


@dataclass(frozen=True)
class Assign:
    what: Assignment
    where: int


@dataclass(frozen=True)
class Switch:
    to: Switching


Step = Union[Hook, Call, Hand, Assign, Switch]


def steps() -> st.SearchStrategy[tuple[Step, ...]]:
    """1-8 steps, with at least one call (what would a model never called show?)."""
    from hypothesis import strategies as st

    call = st.builds(Call, st.sampled_from(Mode), st.booleans(), st.booleans())
    step = st.one_of(
        st.builds(Hook, st.sampled_from(HookKind), st.integers(0, 15), st.booleans()),
        call,
        st.builds(Hand, st.sampled_from([h for h in Handing if h not in SLOW_HANDINGS] * 10 + list(SLOW_HANDINGS))),
        st.sampled_from([*Assignment, *Switching]).flatmap(_assigned_or_switched),  # each as often
    )
    return st.tuples(st.lists(step, max_size=7), call, st.integers(0, 7)).map(
        lambda drawn: tuple(drawn[0][: drawn[2]]) + (drawn[1],) + tuple(drawn[0][drawn[2] :])
    )


def _assigned_or_switched(what: Assignment | Switching) -> st.SearchStrategy[Step]:
    """An assignment of that kind on a drawn module, or that switch: each kind of switch is drawn as
    often as each kind of assignment."""
    from hypothesis import strategies as st

    if isinstance(what, Switching):
        return st.just(Switch(what))
    return st.builds(Assign, st.just(what), st.integers(0, 15))


def api_of(step: Step) -> str:
    """The API a step exercises, as the catalogue's scenarios name their APIs."""
    if isinstance(step, Hook):
        return step.kind.api
    if isinstance(step, Call):
        return {
            Mode.NO_GRAD: "torch.no_grad",
            Mode.INFERENCE: "torch.inference_mode",
            Mode.AUTOCAST: "torch.autocast",
            Mode.CHECKPOINT: "torch.utils.checkpoint.checkpoint",
            Mode.CHECKPOINT_REENTRANT: "torch.utils.checkpoint.checkpoint",
            Mode.FUNCTIONAL_CALL: "torch.func.functional_call",
            Mode.VMAP: "torch.func.vmap",
            Mode.JVP: "torch.func.jvp",
            Mode.GRAD: "torch.func.grad",
        }.get(step.mode, "forward")
    if isinstance(step, Hand):
        return {
            Handing.COPY: "copy.copy",
            Handing.DEEPCOPY: "copy.deepcopy",
            Handing.STATE_DICT: "load_state_dict",
            Handing.EVAL: "eval",
            Handing.TRAIN: "train",
            Handing.COMPILE: "compile",
            Handing.TORCH_COMPILE: "torch.compile",
            Handing.EXPORT: "torch.export.export",
            Handing.JIT_SAVE: "torch.jit.save",
            Handing.QUANTIZE: "torch.ao.quantization.quantize_dynamic",
            Handing.DOUBLE: "double",
            Handing.WORKAROUND_COPY: "repro.workaround.shallow_copy",
            Handing.WORKAROUND_DEEPCOPY: "repro.workaround.deepcopy",
        }[step.to]
    if isinstance(step, Switch):
        return step.to.api
    return "setattr" if step.what is not Assignment.BUFFER else "register_buffer"


def is_workaround(step: Step) -> bool:
    """Whether the step is a function of ``repro.workaround`` in place of torch's own, or a switch a
    workaround documents."""
    return (
        (isinstance(step, Hook) and step.kind.is_workaround)
        or (isinstance(step, Hand) and step.to in (Handing.WORKAROUND_COPY, Handing.WORKAROUND_DEEPCOPY))
        or isinstance(step, Switch)
    )


def calls_model(step: Step) -> bool:
    """Whether the step runs the model's own forward (a call, or a handing that calls it): a compiled
    forward's first calls are profiled, and a later one runs the optimized graph."""
    return isinstance(step, Call) or (isinstance(step, Hand) and step.to in CALLING)


def switched_too_late(steps: Sequence[Step], index: int) -> bool:
    """Whether ``steps[index]`` switches on what works only before the model's first call, after one."""
    step = steps[index]
    return isinstance(step, Switch) and step.to.before_calls and any(calls_model(s) for s in steps[:index])


def describe(step: Step, paths: list[str]) -> str:
    """One line naming the step, for reports and the script's comments."""
    if isinstance(step, Hook):
        changes = ", changing what it gets" if step.changes else ""
        return f"{step.kind.value} on {_where(paths, step.where) or 'the root'}{changes}"
    if isinstance(step, Call):
        inputs = " on inputs below -50" if step.negative else ""
        return f"call ({step.mode.name.lower()}){inputs}" + (", then backward" if step.backward else "")
    if isinstance(step, Hand):
        return HANDED.get(step.to, step.to.value)
    if isinstance(step, Switch):
        return f"{step.to.switched} from here on"
    return f"{step.what.value} on {_where(paths, step.where) or 'the root'}"


def _where(paths: list[str], index: int) -> str:
    return paths[index % len(paths)]


# --- doing a step on one twin


@dataclass
class State:
    """One twin while its steps run: the model (a copy replaces it; ``original`` is what it copied),
    the recorder, the calls made so far, the global hooks' handles and the switches on (removed and
    switched off when the case ends: they are process-wide)."""

    model: Any
    rec: Any  # repro.engine.recorder.Recorder
    features: int
    batch: int
    handles: list[Any]
    original: Any = None
    calls: int = 0
    switches: ExitStack = field(default_factory=ExitStack)


def module_at(model: Any, path: str) -> Any:
    """The module at ``path`` by attribute, as users reach it (``get_submodule`` is a stub that raises
    on a compiled module)."""
    for name in path.split(".") if path else ():
        model = getattr(model, name)
    return model


def perform(step: Step, state: State, paths: list[str]) -> None:
    """Do ``step`` on the twin and note what it observed, under the names the engine's scenarios use
    for the same things (``the copy's class``, ``original training``, ``first call: output``), so that
    the catalogue's recognisers read both alike. It may raise: the caller records the error."""
    import torch

    import repro.workaround
    from repro.engine.recorder import changed_classes

    if isinstance(step, Hook):
        where = _where(paths, step.where)
        target = state.model if step.kind.is_global else module_at(state.model, where)
        hook = state.rec.hook(
            f"{step.kind.name.lower()} on {where or 'root'}", _changing(step.kind) if step.changes else None
        )
        state.handles.append(_register(step.kind, target, hook))
    elif isinstance(step, Call):
        _call(step, state)
    elif isinstance(step, Hand):
        model = state.model
        if step.to in COPIES:
            copies: dict[Handing, Callable[[Any], Any]] = {
                Handing.COPY: copy.copy,
                Handing.DEEPCOPY: copy.deepcopy,
                Handing.WORKAROUND_COPY: repro.workaround.shallow_copy,
                Handing.WORKAROUND_DEEPCOPY: repro.workaround.deepcopy,
            }
            state.model = copies[step.to](model)
            state.original = model
            # a class of the original's name deriving from it is the same (shallow_copy's, documented)
            same = isinstance(state.model, type(model)) and type(state.model).__name__ == type(model).__name__
            state.rec.note("the copy's class", "the same class" if same else type(state.model).__name__)
            state.rec.note("the copy's children of another class", changed_classes(model, state.model))
            leaves = [name for name, p in state.model.named_parameters() if not p.is_leaf]
            state.rec.note("copy's parameters that are not leaves", leaves)
        elif step.to in (Handing.COMPILE, *RUN_AS_WRITTEN):
            _run_as_written(step.to, state)
        elif step.to is Handing.STATE_DICT:
            state.rec.note("state_dict keys", sorted(model.state_dict()))
            model.load_state_dict(model.state_dict())
        else:
            getattr(model, step.to.name.lower())()
            if state.original is not None:
                state.rec.note("original training", state.original.training)
        state.rec.model = state.model
        state.rec.note("training", [m.training for m in state.model.modules()])
    elif isinstance(step, Switch):
        import torch.utils.checkpoint

        exec(step.to.value, {"switches": state.switches, "torch": torch, "repro": repro})  # our own fixed text
    else:
        target = module_at(state.model, _where(paths, step.where))
        namespace = {"t": target, "torch": torch, "FEATURES": state.features}
        exec(step.what.value, namespace)  # our own fixed statement, not downloaded text
        state.rec.note("state_dict keys", sorted(state.model.state_dict()))
        state.rec.note("training", [m.training for m in state.model.modules()])


def _changing(kind: HookKind) -> Any:
    """What a changing hook returns: twice what it got (forward and pre-hooks), else nothing."""
    if kind in (HookKind.FORWARD, HookKind.FORWARD_ALWAYS, HookKind.GLOBAL_FORWARD):
        return lambda module, args, output: output * 2
    if kind is HookKind.FORWARD_KWARGS:
        return lambda module, args, kwargs, output: output * 2
    if kind in (HookKind.FORWARD_PRE, HookKind.FORWARD_PRE_PREPEND, HookKind.GLOBAL_FORWARD_PRE):
        return lambda module, args: tuple(a * 2 for a in args)
    if kind is HookKind.FORWARD_PRE_KWARGS:
        return lambda module, args, kwargs: (tuple(a * 2 for a in args), kwargs)
    return None


def _register(kind: HookKind, target: Any, hook: Any) -> Any:
    import torch

    import repro.workaround

    if kind.is_workaround:
        register: Callable[[Any, Any], Any] = getattr(repro.workaround, kind.stands_for)
        return register(target, hook)
    if kind.is_global:
        return getattr(torch.nn.modules.module, kind.api)(hook)
    keywords = {
        HookKind.FORWARD_PRE_PREPEND: {"prepend": True},
        HookKind.FORWARD_PRE_KWARGS: {"with_kwargs": True},
        HookKind.FORWARD_KWARGS: {"with_kwargs": True},
        HookKind.FORWARD_ALWAYS: {"always_call": True},
    }.get(kind, {})
    return getattr(target, kind.api)(hook, **keywords)


def _call(step: Call, state: State) -> None:
    import contextlib

    import torch
    import torch.utils.checkpoint

    from repro.engine.models import Size, inputs

    state.calls += 1
    scale = -100.0 if step.negative else 1.0
    x = state.rec.input([[v * scale for v in row] for row in inputs(Size(state.batch, state.features))])
    model = state.model
    try:
        if step.mode in (Mode.CHECKPOINT, Mode.CHECKPOINT_REENTRANT):
            y = torch.utils.checkpoint.checkpoint(model, x, use_reentrant=step.mode is Mode.CHECKPOINT_REENTRANT)
        elif step.mode in TRANSFORMS:
            namespace = {"m": model, "x": x, "torch": torch}
            exec(step.mode.value, namespace)  # our own constant text, as the script shows it
            y = namespace["y"]
        else:
            contexts: dict[Mode, Callable[[], AbstractContextManager[Any]]] = {
                Mode.NO_GRAD: torch.no_grad,
                Mode.INFERENCE: torch.inference_mode,
                Mode.AUTOCAST: lambda: torch.autocast("cpu", dtype=torch.bfloat16),
            }
            with contexts.get(step.mode, contextlib.nullcontext)():
                y = model(x)
    except Exception as err:  # what the caller can catch: the class, as the engine's scenarios note it
        state.rec.note("the caller catches", type(err).__name__)
        raise
    state.rec.note("first call: output" if state.calls == 1 else f"call {state.calls}: output", y)
    if step.backward and isinstance(y, torch.Tensor) and y.requires_grad:
        y.sum().backward()
        tensors = [*model.named_parameters(), *model.named_buffers()]
        state.rec.note("gradients", {**{n: t.grad for n, t in tensors}, "input": x.grad})
        for _, tensor in tensors:
            tensor.grad = None


def _run_as_written(handing: Handing, state: State) -> None:
    """``handing``'s code, executed as the script shows it (our own constant text); what it computed
    noted under the names the engine's scenarios use (``graphs captured``, the children quantized)."""
    import io

    import torch
    import torch.ao.quantization

    from repro.engine.models import Size, inputs

    graphs: list[int] = []

    def counting(graph: Any, example_inputs: Any) -> Any:
        graphs.append(1)
        if handing is Handing.COMPILE:  # later calls compile: each graph shows among that call's hook calls
            state.rec.mark("torch.compile backend")()
        return graph.forward

    x = state.rec.input(inputs(Size(state.batch, state.features)))
    state.calls += handing in CALLING  # a later call's output is noted as not the first's
    namespace = {"m": state.model, "x": x, "torch": torch, "io": io, "counting": counting}
    exec(handing.value, namespace)
    if "y" in namespace:
        state.rec.note("output", namespace["y"])
    if handing is Handing.TORCH_COMPILE:
        state.rec.note("graphs captured", len(graphs))
    if handing is Handing.QUANTIZE:
        dynamic = torch.ao.nn.quantized.dynamic.Linear
        state.rec.note("first call: its child quantized", any(isinstance(s, dynamic) for s in namespace["q"].modules()))
