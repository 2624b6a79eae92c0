"""Generated model pairs: a ``ModelSpec`` drawn by Hypothesis, written as the source text of two twins.

Each level of a model is drawn: its base (a ScriptModule subclass with a ``@script_method`` forward or
a plain one, an eager ``nn.Module``, or an eager module ``torch.jit.script`` compiles), its parameters
and buffers, 0-3 children (``nn.Linear`` or another level) and a forward body of TorchScript-compilable
operations that calls the children in a drawn order. The eager twin is the same text with ``nn.Module``
bases, no ``script_method`` and no ``torch.jit.script``. Sizes are drawn so that batch and features are
sometimes equal: metadata checks (checkpoint's) hide silent departures otherwise.

TorchScript reads a forward's source with ``inspect``, so the text is the model: written to a file and
imported (``repro.explore.loading``), and the same text heads the paste-ready script of a departure.
Nothing here knows the catalogue's bugs: the explorer is measured on finding them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING

from repro.traits import EAGER, PLAIN_FORWARD, SCRIPT_METHOD, SCRIPTED, Traits

if TYPE_CHECKING:  # Hypothesis is needed to draw, not to run a case (the report and formats import these)
    from hypothesis import strategies as st


class Base(Enum):
    """What a level of the model is, in the twin under test."""

    SCRIPT_METHOD = "ScriptModule subclass, @script_method forward"
    PLAIN_FORWARD = "ScriptModule subclass, plain forward"
    EAGER = "nn.Module"
    SCRIPTED_EAGER = "nn.Module compiled by torch.jit.script"


SUBCLASSES = (Base.SCRIPT_METHOD, Base.PLAIN_FORWARD)
COMPILED = (Base.SCRIPT_METHOD, Base.SCRIPTED_EAGER)  # a level whose own forward TorchScript compiles
STYLE = {
    Base.SCRIPT_METHOD: SCRIPT_METHOD,
    Base.PLAIN_FORWARD: PLAIN_FORWARD,
    Base.EAGER: EAGER,
    Base.SCRIPTED_EAGER: SCRIPTED,
}


class Op(Enum):
    """One statement of a forward body, on ``x`` (batch x features)."""

    TANH = "x = torch.tanh(x)"
    RELU = "x = torch.relu(x)"
    MUL_BUFFER = "x = x * self.b0"
    ADD_PARAMETER = "x = x + self.p0"
    VIEW = "x = x.view(-1).view(x.shape[0], x.shape[1])"
    ADD_INPUT = "x = x + inputs"
    RAISE = 'if bool(x.min() < -50.0):\n    raise ValueError("an input below -50")'


@dataclass(frozen=True)
class Level:
    """One module of the model: what it is, what it holds, and its forward."""

    base: Base
    parameters: int  # 0 or 1: p0, of shape (features,)
    buffers: tuple[bool, ...]  # b0, b1...: persistent or not
    children: tuple[Level | None, ...]  # None: an nn.Linear
    ops: tuple[Op, ...]  # before the children are called; RAISE first where drawn
    order: tuple[int, ...]  # the children's indices in the order forward calls them
    names: tuple[int, ...] = ()  # each child's attribute number (c0, c1...): kept when a reduction drops one
    hooked: bool = False  # __init__ registers a forward hook that doubles the output (``HOOK``)

    def named(self) -> list[tuple[int, Level | None]]:
        """Each child with its attribute number."""
        return list(zip(self.names or range(len(self.children)), self.children))

    @property
    def depth(self) -> int:
        return 1 + max((child.depth for child in self.children if child is not None), default=0)


@dataclass(frozen=True)
class ModelSpec:
    root: Level
    batch: int
    features: int

    def levels(self) -> list[tuple[str, Level]]:
        """Every level with its class name (``Root``, ``Root_0``, ``Root_0_1``...), parents first."""
        found: list[tuple[str, Level]] = []

        def visit(name: str, level: Level) -> None:
            found.append((name, level))
            for number, child in level.named():
                if child is not None:
                    visit(f"{name}_{number}", child)

        visit("Root", self.root)
        return found

    def paths(self) -> list[str]:
        """Every module's path from the root ("" for the root, "c0", "c0.c1"...), Linears included."""
        found: list[str] = []

        def visit(path: str, level: Level | None) -> None:
            found.append(path)
            for number, child in level.named() if level else ():
                visit(f"{path}.c{number}" if path else f"c{number}", child)

        visit("", self.root)
        return found

    def traits(self) -> Traits:
        """What a scope predicate reads (``repro.traits``), from what each level is and calls."""
        found = dict.fromkeys(
            ("compiled", "inside", "subclass_inside", "linear", "raises", "ops", "nonpersistent"), False
        )

        def visit(level: Level, called_compiled: bool, in_script_module: bool) -> None:
            subclass = level.base in SUBCLASSES
            # a child of a ScriptModule, and a module a compiled forward calls, is compiled with it
            compiled = level.base in COMPILED or called_compiled or (level.base is Base.EAGER and in_script_module)
            found["compiled"] |= compiled or (subclass and None in level.children)
            found["inside"] |= compiled and bool(level.children)
            found["linear"] |= (subclass or compiled) and None in level.children
            found["raises"] |= compiled and Op.RAISE in level.ops
            found["ops"] |= compiled and len(level.ops) + len(level.children) + level.hooked >= 2  # hooks compile too
            found["nonpersistent"] |= compiled and not subclass and False in level.buffers
            for child in level.children:
                if child is not None:
                    found["subclass_inside"] |= compiled and child.base in SUBCLASSES
                    visit(child, compiled, subclass or compiled)

        visit(self.root, False, False)
        levels = [level for _, level in self.levels()]
        return Traits(
            root=STYLE[self.root.base],
            styles=tuple(sorted({STYLE[level.base] for level in levels})),
            depth=self.root.depth,
            subclass=any(level.base in SUBCLASSES for level in levels),
            compiled=found["compiled"],
            inside_torchscript=found["inside"],
            subclass_inside_torchscript=found["subclass_inside"],
            linear_in_script_module=found["linear"],
            raises_compiled=found["raises"],
            compiled_ops=found["ops"],
            init_hooks_plain_forward=any(level.hooked and level.base is Base.PLAIN_FORWARD for level in levels),
            nonpersistent_buffer_compiled=found["nonpersistent"],
            batch_is_features=self.batch == self.features,
        )


def _level(depth: int) -> st.SearchStrategy[Level]:
    from hypothesis import strategies as st

    deeper = st.none() if depth >= 3 else st.one_of(st.none(), st.deferred(lambda: _level(depth + 1)))
    return st.builds(
        _ordered,
        base=st.sampled_from(Base),
        parameters=st.integers(0, 1),
        buffers=st.lists(st.sampled_from((True,) * 7 + (False,)), max_size=2).map(tuple),  # persistent, mostly
        children=st.lists(deeper, max_size=3).map(tuple),
        ops=st.lists(st.sampled_from(Op), max_size=3).map(tuple),
        shuffle=st.randoms(use_true_random=False),
        hooked=st.sampled_from((False,) * 7 + (True,)),
    )


def _ordered(
    base: Base,
    parameters: int,
    buffers: tuple[bool, ...],
    children: tuple[Level | None, ...],
    ops: tuple[Op, ...],
    shuffle: random.Random,
    hooked: bool,
) -> Level:
    """A level whose body uses only members it has, raises first if at all, and calls its children in a
    drawn order."""
    order = list(range(len(children)))
    shuffle.shuffle(order)
    return consistent(Level(base, parameters, tuple(buffers), tuple(children), tuple(ops), tuple(order), hooked=hooked))


def consistent(level: Level) -> Level:
    """``level`` with ops only on members it has, each once, a raise first if at all."""
    usable = [
        op
        for op in level.ops
        if (op is not Op.MUL_BUFFER or level.buffers)
        and (op is not Op.ADD_PARAMETER or level.parameters)
        and op is not Op.RAISE
    ]
    body = ((Op.RAISE,) if Op.RAISE in level.ops else ()) + tuple(dict.fromkeys(usable))
    return replace(level, ops=body)


def specs() -> st.SearchStrategy[ModelSpec]:
    """Model specs of depth 1-3; a third of them with batch equal to features."""
    from hypothesis import strategies as st

    sizes = st.one_of(st.integers(1, 3).map(lambda n: (n, n)), st.tuples(st.integers(1, 3), st.integers(1, 3)))
    return st.builds(lambda root, size: ModelSpec(root, *size), _level(1), sizes)


# --- the source text of the twins

# A hook __init__ registers: typed, since TorchScript compiles the hooks a module has when it is compiled.
HOOK = "doubling_hook"
IMPORTS = "from typing import Tuple\n\nimport torch\n"
HOOK_TEXT = f"""

def {HOOK}(module, args: Tuple[torch.Tensor], output: torch.Tensor) -> torch.Tensor:
    return output * 2
"""


def source(spec: ModelSpec, scripted: bool) -> str:
    """The module text of one twin: every level's class, children before parents (TorchScript compiles
    a child's class when its parent's forward is compiled)."""
    return IMPORTS + HOOK_TEXT + classes(spec, scripted)


def classes(spec: ModelSpec, scripted: bool) -> str:
    """The twin's classes alone (a script puts its own imports and ``HOOK_TEXT`` before them)."""
    texts = [_class(name, level, spec.features, scripted) for name, level in reversed(spec.levels())]
    return "\n\n" + "\n\n\n".join(texts) + "\n"


def _class(name: str, level: Level, features: int, scripted: bool) -> str:
    script_module = scripted and level.base in (Base.SCRIPT_METHOD, Base.PLAIN_FORWARD)
    lines = [f"class {name}({'torch.jit.ScriptModule' if script_module else 'torch.nn.Module'}):"]
    lines += ["    def __init__(self) -> None:", "        super().__init__()"]
    if level.parameters:
        lines.append(f"        self.p0 = torch.nn.Parameter(torch.linspace(-0.5, 0.5, {features}))")
    for index, persistent in enumerate(level.buffers):
        values = f"torch.linspace(0.5, 1.5, {features})"
        lines.append(f'        self.register_buffer("b{index}", {values}, persistent={persistent})')
    for number, child in level.named():
        made = f"torch.nn.Linear({features}, {features})" if child is None else f"{name}_{number}()"
        if scripted and child is not None and child.base is Base.SCRIPTED_EAGER:
            made = f"torch.jit.script({made})"
        lines.append(f"        self.c{number} = {made}")
    if level.hooked:
        lines.append(f"        self.register_forward_hook({HOOK})")
    lines.append("")
    if scripted and level.base is Base.SCRIPT_METHOD:
        lines.append("    @torch.jit.script_method")
    lines.append("    def forward(self, x: torch.Tensor) -> torch.Tensor:")
    if Op.ADD_INPUT in level.ops:
        lines.append("        inputs = x")
    for op in level.ops:
        lines += [f"        {line}" for line in op.value.splitlines()]
    numbers = [number for number, _ in level.named()]
    lines += [f"        x = self.c{numbers[index]}(x)" for index in level.order]
    lines.append("        return x")
    return "\n".join(lines)
