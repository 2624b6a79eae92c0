"""What users hand a module to in other torch subsystems: compiling and exporting, saving with
TorchScript, the ``torch.func`` and ``torch.autograd.functional`` transforms, grad and precision
modes, distributed data parallel, loading a state dict by assignment, and dynamic quantization.

Each body calls the subsystem twice on the same module (a first and a later call); most register a
forward hook first, so that what the subsystem does with the module's hooks is observed too.
Those that load dynamo (compiling, exporting, DDP, the transforms built on it) take seconds: slow tier.
"""

from __future__ import annotations

import gc
import io
import sys
import weakref
from collections.abc import Callable
from typing import Any

import torch

from repro.engine.models import double_output, shift_input
from repro.engine.recorder import Recorder
from repro.engine.scenarios.table import scenario
from repro.vocabulary import Tier

CALLS = ("first call", "later call")


def _weak(obj: object) -> Callable[[], object] | None:
    """A weak reference to ``obj``, or None where it takes none."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return None


def _hooked(m: Any, rec: Recorder) -> None:
    m.register_forward_hook(rec.mark("forward hook"))


def _warmed(m: Any, rec: Recorder) -> None:
    """One plain call first: a compiled forward is optimized after its first run, and a transform
    must meet the same compiled state whichever instance (fresh class or not) the run builds."""
    m(rec.input())
    _hooked(m, rec)


@scenario(
    "torch.compile",
    "a counting backend captures the forward; outputs and hooks as eager",
    tier=Tier.SLOW,
    requires=("x only", "one graph"),
)
def _(m: Any, rec: Recorder) -> None:
    import torch._dynamo

    torch._dynamo.reset()  # a graph another run compiled must not serve this one
    graphs = []

    def counting(graph: Any, example_inputs: Any) -> Any:
        graphs.append(sorted({str(node.op) for node in graph.graph.nodes}))
        return graph.forward

    _hooked(m, rec)
    compiled = torch.compile(m, backend=counting)
    for call in CALLS:
        rec.note(f"{call}: output", compiled(rec.input()))
    rec.facts["graphs captured"] = len(graphs)
    torch._dynamo.reset()


@scenario(
    "torch.export.export",
    "exports the forward; the exported program computes the same output",
    tier=Tier.SLOW,
    requires=("x only", "one graph"),
)
def _(m: Any, rec: Recorder) -> None:
    _hooked(m, rec)
    for call in CALLS:
        exported = torch.export.export(m, (rec.input(),))
        rec.note(f"{call}: exported output", exported.module()(rec.input()))
        rec.facts[f"{call}: state_dict keys"] = sorted(exported.state_dict)


@scenario(
    "torch.jit.save",
    "round-trips through torch.jit.save and torch.jit.load: outputs, parameters, training flag",
    "torch.jit.load",
    tier=Tier.VARIANT,
    requires=("x only",),
)
def _(m: Any, rec: Recorder) -> None:
    m.eval()
    scripted = m if isinstance(m, torch.jit.ScriptModule) else torch.jit.script(m)  # eager: script it first
    for call in CALLS:
        buffer = io.BytesIO()
        torch.jit.save(scripted, buffer)
        buffer.seek(0)
        loaded = torch.jit.load(buffer)
        rec.note(f"{call}: output", loaded(rec.input()))
        rec.facts[f"{call}: training"] = loaded.training
        rec.facts[f"{call}: parameters"] = {name: rec.summary(p) for name, p in loaded.named_parameters()}


@scenario(
    "torch.jit.save",
    "keeps a forward hook and pre-hook registered after construction: the loaded module runs them",
    "torch.jit.load",
    "register_forward_hook",
    "register_forward_pre_hook",
    tier=Tier.VARIANT,
    where="registered after construction, then saved",
    requires=("x only",),
)
def _(m: Any, rec: Recorder) -> None:
    m.register_forward_pre_hook(shift_input)  # typed: eager's torch.jit.script compiles them
    m.register_forward_hook(double_output)
    _hooks_saved(m, rec)


@scenario(
    "torch.jit.save",
    "keeps a forward hook and pre-hook registered in __init__: the loaded module runs them",
    "torch.jit.load",
    "register_forward_hook",
    "register_forward_pre_hook",
    tier=Tier.VARIANT,
    where="registered in __init__, then saved",
    model="hooked in __init__, after children",
    requires=("hooked in __init__",),
)
def _hooks_saved(m: Any, rec: Recorder) -> None:
    scripted = m if isinstance(m, torch.jit.ScriptModule) else torch.jit.script(m)  # eager: compiles the hooks
    rec.note("output", m(rec.input()))
    for call in CALLS:
        buffer = io.BytesIO()
        torch.jit.save(scripted, buffer)
        buffer.seek(0)
        output = torch.jit.load(buffer)(rec.input())
        output.sum().backward()
        rec.note(f"{call}: output of the loaded module", output)


@scenario(
    "torch.func.grad",
    "gradients of the parameters through functional_call",
    tier=Tier.VARIANT,
    requires=("x only", "params"),
)
def _(m: Any, rec: Recorder) -> None:
    params = {name: p.detach() for name, p in m.named_parameters()}
    _hooked(m, rec)
    for call in CALLS:
        grads = torch.func.grad(lambda p, x: torch.func.functional_call(m, p, (x,)).sum())(params, rec.input())
        rec.note(f"{call}: grads", grads)


@scenario(
    "torch.func.vmap", "maps the model over a batch dimension", tier=Tier.VARIANT, requires=("x only", "one graph")
)
def _(m: Any, rec: Recorder) -> None:
    _warmed(m, rec)
    for call in CALLS:
        rec.note(f"{call}: output", torch.func.vmap(m)(rec.input()))


@scenario("torch.func.jvp", "forward-mode derivative of the model", tier=Tier.VARIANT, requires=("x only",))
def _(m: Any, rec: Recorder) -> None:
    _warmed(m, rec)
    for call in CALLS:
        x = rec.input().detach()
        rec.note(f"{call}: output and tangent", torch.func.jvp(m, (x,), (torch.ones_like(x),)))


@scenario(
    "torch.autograd.functional.jacobian", "the model's jacobian at the input", tier=Tier.VARIANT, requires=("x only",)
)
def _(m: Any, rec: Recorder) -> None:
    _hooked(m, rec)
    for call in CALLS:
        rec.note(f"{call}: jacobian", torch.autograd.functional.jacobian(m, rec.input().detach()))


@scenario(
    "torch.autocast", "autocast to bfloat16 on CPU: output dtype and values", tier=Tier.VARIANT, requires=("x only",)
)
def _(m: Any, rec: Recorder) -> None:
    _hooked(m, rec)
    for call in CALLS:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            rec.note(f"{call}: output", m(rec.input()))


@scenario(
    "torch.autocast",
    "training under autocast to bfloat16 on CPU: gradients and their dtypes",
    tier=Tier.VARIANT,
    where="in training",
    requires=("x only",),
)
def _(m: Any, rec: Recorder) -> None:
    """Forward under autocast, backward after it, as torch's AMP recipe does; the output's own dtype is
    the other scenario's."""
    for call in CALLS:
        x = rec.input()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = m(x)
        out.sum().backward()
        rec.note(f"{call}: input grad", x.grad)
        rec.facts[f"{call}: grads"] = {name: rec.summary(p.grad) for name, p in m.named_parameters()}
        m.zero_grad()


@scenario("torch.no_grad", "no graph recorded; hooks run", tier=Tier.VARIANT, requires=("x only",))
def _(m: Any, rec: Recorder) -> None:
    _warmed(m, rec)
    for call in CALLS:
        with torch.no_grad():
            rec.note(f"{call}: output", m(rec.input()))


@scenario("torch.inference_mode", "an inference tensor out; hooks run", tier=Tier.VARIANT, requires=("x only",))
def _(m: Any, rec: Recorder) -> None:
    _warmed(m, rec)
    for call in CALLS:
        with torch.inference_mode():
            out = m(rec.input())
        rec.note(f"{call}: output", out)
        rec.facts[f"{call}: inference tensor"] = out.is_inference()


@scenario(
    "torch.nn.parallel.DistributedDataParallel",
    "gloo, world size 1: outputs, hooks and gradients as eager",
    "torch.distributed.HashStore",
    tier=Tier.SLOW,
    requires=("x only", "params"),
)
def _(m: Any, rec: Recorder) -> None:
    import torch.distributed as dist

    excepthook = sys.excepthook  # init_process_group wraps it for good: each group made adds "[rank0]: "
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        _hooked(m, rec)
        wrapped = torch.nn.parallel.DistributedDataParallel(m)
        for call in CALLS:
            wrapped(rec.input()).sum().backward()
            rec.facts[f"{call}: grads"] = {name: rec.summary(p.grad) for name, p in m.named_parameters()}
        # Freed while the group lives and its queue is drained: a Reducer that frees the last reference
        # to the group joins gloo's threads holding the GIL, while one of them waits for it to free a work.
        reducer = _weak(getattr(wrapped, "reducer", None))
        del wrapped
        if reducer is None or reducer() is not None:  # held by a reference cycle: a full collection (0.1 s)
            gc.collect()
        dist.barrier()
    finally:
        dist.destroy_process_group()
        sys.excepthook = excepthook  # to every traceback printed later


@scenario(
    "torch.nn.DataParallel",
    "replicas on two CUDA devices: outputs, hooks and gradients as eager",
    tier=Tier.VARIANT,
    device="cuda",
    devices=2,
    requires=("x only", "params"),
)
def _(m: Any, rec: Recorder) -> None:
    _hooked(m, rec)
    wrapped = torch.nn.DataParallel(m.to("cuda:0"), device_ids=[0, 1])
    for call in CALLS:
        out = wrapped(rec.input())  # its batch of two: one row per device
        rec.note(f"{call}: output", out)
        out.sum().backward()
        rec.facts[f"{call}: grads"] = {name: rec.summary(p.grad) for name, p in m.named_parameters()}


@scenario(
    "load_state_dict(assign)",
    "assign=True puts the loaded tensors in the module",
    tier=Tier.VARIANT,
    requires=("x only", "params"),
)
def _(m: Any, rec: Recorder) -> None:
    for call, scale in zip(CALLS, (2.0, 3.0)):
        state = {name: t.detach() * scale for name, t in m.state_dict().items()}
        m.load_state_dict(state, assign=True)
        rec.note(f"{call}: output", m(rec.input()))
        rec.facts[f"{call}: the loaded tensors are the module's"] = all(
            t is state[name] for name, t in m.state_dict().items()
        )


@scenario(
    "torch.ao.quantization.quantize_dynamic",
    "dynamic int8 quantization of the linear layers",
    tier=Tier.VARIANT,
    requires=("x only", "linear"),
    model="child",
)
def _(m: Any, rec: Recorder) -> None:
    dynamic_linear = torch.ao.nn.quantized.dynamic.Linear
    for call in CALLS:
        quantized = torch.ao.quantization.quantize_dynamic(m, {torch.nn.Linear}, dtype=torch.qint8)
        rec.note(f"{call}: output", quantized(rec.input()))
        rec.note(f"{call}: its child", quantized.linear)  # the class apart (types): compiled children differ
        rec.facts[f"{call}: its child quantized"] = isinstance(quantized.linear, dynamic_linear)
        rec.facts[f"{call}: the original's child quantized"] = isinstance(m.linear, dynamic_linear)
