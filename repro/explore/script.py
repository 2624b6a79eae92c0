"""A finding as a standalone script a maintainer can paste: the model's classes in both twins, the
steps up to the departing one, and what that step did in each. It needs only torch and the standard
library (and this project's ``repro.workaround`` where a step is one of its functions: a departure
there is the workaround's, ours to mend), prints the eager twin's result next to the subclass's, and
exits 1 while the departure is there (0 once the twins agree)."""

from __future__ import annotations

import re
import textwrap

from repro.engine.models import Size, inputs
from repro.explore.case import Case
from repro.explore.generate import HOOK_TEXT, Base, classes
from repro.explore.steps import (
    COPIES,
    RUN_AS_WRITTEN,
    Assign,
    Call,
    Hand,
    Handing,
    Hook,
    HookKind,
    Step,
    Switch,
    describe,
)

HELPERS = '''

def built(cls, script=False):
    """Both twins from the same seed, values rounded to eighths, as the explorer built them."""
    torch.manual_seed(0)
    root = torch.jit.script(cls()) if script else cls()
    with torch.no_grad():
        for t in [*root.parameters(), *root.buffers()]:
            t.copy_(torch.round(t * 8) / 8)
    return root


def shown(value):
    if isinstance(value, torch.Tensor):
        values = [round(v, 4) for v in value.detach().flatten().tolist()]
        return f"{value.dtype} {list(value.shape)} requires_grad={value.requires_grad} {values}"
    if isinstance(value, torch.nn.Module):
        name = getattr(value, "original_name", type(value).__name__)
        return f"<{name.removeprefix('Eager')}>"  # the eager twin's classes are named Eager...
    if isinstance(value, (list, tuple)):
        return [shown(v) for v in value]
    if isinstance(value, dict):
        return {k: shown(v) for k, v in value.items()}
    return value


def doubled(module, args, *rest):  # a changing hook: twice the output it gets (forward hooks)
    return rest[-1] * 2


def doubled_args(module, args, *kwargs):  # a changing pre-hook: twice the arguments it gets
    twice = tuple(a * 2 for a in args)
    return (twice, kwargs[0]) if kwargs else twice


def hook(seen, label, change=None):
    def record(*args):
        seen.append((label, shown(args)))
        return change(*args) if change else None

    return record


def run(make):
    """The steps on one twin: what the last one did (what it observed, or its error)."""
    seen, handles, observed = [], [], {}

    def counting(graph, example_inputs):  # a torch.compile backend that notes each graph
        seen.append("torch.compile backend")
        return graph.forward

    try:
        m = make()
'''

ENDING = """
        return {{"hook calls": seen, **shown(observed)}}
    except Exception as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        return {{"hook calls": seen, "raised": f"{{type(err).__name__}}: {{first}}"}}
    finally:
        for handle in handles:
            handle.remove()

{later}
subclass, eager = run(lambda: built(Root{script})), run(lambda: built(EagerRoot))
print(__doc__.strip())
for key in sorted(set(subclass) | set(eager)):
    mark = "  " if subclass.get(key) == eager.get(key) else "!="
    print(mark, key)
    print("     ScriptModule subclass:", subclass.get(key))
    print("     eager nn.Module:      ", eager.get(key))
sys.exit(1 if subclass != eager else 0)
"""

SEEN = "    seen, handles, observed = [], [], {}\n"  # HELPERS' run(): where a switch's stack starts
REMOVED = "            handle.remove()\n"  # ENDING's finally: where it is closed

CHANGES = {  # a changing hook's helper in the script, by the hooks that return it
    **dict.fromkeys((HookKind.FORWARD, HookKind.FORWARD_ALWAYS, HookKind.GLOBAL_FORWARD), "doubled"),
    HookKind.FORWARD_KWARGS: "doubled",
    **dict.fromkeys(
        (HookKind.FORWARD_PRE, HookKind.FORWARD_PRE_PREPEND, HookKind.GLOBAL_FORWARD_PRE, HookKind.FORWARD_PRE_KWARGS),
        "doubled_args",
    ),
}


def script(case: Case, step: int, what: str) -> str:
    """The script of a finding at ``step`` (1-based; 0: building the model) described as ``what``."""
    scripted = classes(case.spec, scripted=True)
    eager = re.sub(r"\bRoot", "EagerRoot", classes(case.spec, scripted=False))
    script_root = ", script=True" if case.spec.root.base is Base.SCRIPTED_EAGER else ""
    hooked = any(level.hooked for _, level in case.spec.levels())  # __init__ registers HOOK_TEXT's hook
    lines: list[str] = []
    for number, drawn in enumerate(case.steps[:step], start=1):
        comment = textwrap.wrap(f"step {number}: {describe(drawn, case.spec.paths())}", 88, break_on_hyphens=False)
        lines += [*(f"# {line}" for line in comment), *_code(drawn, case, number, number == step)]
    later = (
        f"built(Root{script_root}), built(EagerRoot)  # each class's first instance, dropped\n" if case.later else ""
    )
    said = textwrap.fill(f"A generated model whose ScriptModule twin departs from its eager twin at: {what}.", 96)
    head = f'"""{said}\n"""\n\n'
    ours = any("repro.workaround." in line for line in lines)
    switching = any(isinstance(s, Switch) for s in case.steps[:step])
    text = (
        head
        + ("import contextlib\n" if switching else "")
        + "import copy\nimport io\nimport sys\n"
        + ("from typing import Tuple\n" if hooked else "")
        + "\nimport torch\nimport torch.ao.quantization\nimport torch.utils.checkpoint\n"
        + ("\nimport repro.workaround\n" if ours else "")
        + (HOOK_TEXT if hooked else "")
        + scripted
        + "\n"
        + eager
        + HELPERS.rstrip("\n")
        + "\n"
        + "".join(f"        {line}\n" if line else "\n" for line in lines)
        + ENDING.format(later=later, script=script_root, what=what).rstrip("\n").removeprefix("\n")
        + "\n"
    )
    if switching:  # what a step switched on, switched off after each twin's run
        text = text.replace(SEEN, SEEN + "    switches = contextlib.ExitStack()\n").replace(
            REMOVED, REMOVED + "        switches.close()\n"
        )
    return text


def _code(step: Step, case: Case, number: int, last: bool) -> list[str]:
    """The step's lines on ``m``; the last step's also fill ``observed`` with what the explorer compared."""
    paths = case.spec.paths()
    if isinstance(step, Hook):
        where = paths[step.where % len(paths)]
        target = "" if step.kind.is_global else _at(where) + "."
        change = f", {CHANGES[step.kind]}" if step.changes and step.kind in CHANGES else ""
        label = f"{step.kind.name.lower()} on {where or 'root'}"
        registered = step.kind.value.replace("(t, h)", f"({_at(where)}, h)") if step.kind.is_workaround else None
        return [f'h = hook(seen, "{label}"{change})', f"handles.append({registered or target + step.kind.value})"]
    if isinstance(step, Call):
        lines = [*_input(case, step.negative), *step.mode.value.splitlines()]
        lines += ['observed["output"] = y'] if last else []
        if step.backward:
            lines += ["if y.requires_grad:", "    y.sum().backward()"]
            if last:
                lines.append('    tensors = [*m.named_parameters(), *m.named_buffers(), ("input", x)]')
                lines.append('    observed["gradients"] = {n: t.grad for n, t in tensors}')
            lines.append("    m.zero_grad()")
        return lines
    if isinstance(step, Hand):
        if step.to in COPIES:
            lines = ["original = m", step.to.value]
            if last:
                lines.append("same = isinstance(m, type(original)) and type(m).__name__ == type(original).__name__")
                lines.append('same = "the same class" if same else type(m).__name__')
                lines.append('observed["the copy\'s class"] = same')
                lines.append("copied = dict(m.named_modules())")
                lines.append('observed["the copy\'s children of another class"] = [')
                lines.append("    n for n, s in original.named_modules() if n and type(copied.get(n)) is not type(s)")
                lines.append("]")
                lines.append("leaves = [n for n, p in m.named_parameters() if not p.is_leaf]")
                lines.append('observed["copy\'s parameters that are not leaves"] = leaves')
        elif step.to is Handing.STATE_DICT:
            lines = ['observed["state_dict keys"] = sorted(m.state_dict())' if last else "", step.to.value]
        elif step.to in RUN_AS_WRITTEN:
            lines = [*_input(case, False), *step.to.value.splitlines()]
            if last:
                lines.append('observed["output"] = y')
            if last and step.to is Handing.QUANTIZE:
                lines.append("dynamic = torch.ao.nn.quantized.dynamic.Linear")
                lines.append('observed["its children quantized"] = any(isinstance(s, dynamic) for s in q.modules())')
        else:
            lines = [step.to.value]
            if last and any(isinstance(s, Hand) and s.to in COPIES for s in case.steps[:number]):
                lines.append('observed["original training"] = original.training')
        if last:
            lines.append('observed["training"] = [s.training for s in m.modules()]')
        return [line for line in lines if line]
    if isinstance(step, Switch):
        return [step.to.value]
    assert isinstance(step, Assign)
    lines = [f"t = {_at(paths[step.where % len(paths)])}", step.what.value.replace("FEATURES", str(case.spec.features))]
    if last:
        lines += [
            'observed["state_dict keys"] = sorted(m.state_dict())',
            'observed["training"] = [s.training for s in m.modules()]',
        ]
    return lines


def _input(case: Case, negative: bool) -> list[str]:
    """The input the explorer made for a call: at the model's size, below -50 where ``negative``."""
    scale = -100.0 if negative else 1.0
    values = [[v * scale for v in row] for row in inputs(Size(case.spec.batch, case.spec.features))]
    rows = ",\n    ".join(str(row) for row in values)
    return f"x = torch.tensor([\n    {rows},\n], requires_grad=True)".splitlines()


def _at(path: str) -> str:
    """The module at ``path``, by attribute (``get_submodule`` raises on a compiled module)."""
    return ".".join(["m", *path.split(".")]) if path else "m"
