"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""

import torch


def refuse_uncompiled_forward(m):
    forward = getattr(type(m), "forward", None)
    if isinstance(m, torch.jit.ScriptModule) and hasattr(forward, "__code__"):
        if not m._c._has_method("forward"):
            raise RuntimeError(
                f"{type(m).__name__}.forward is a Python method TorchScript did not compile: "
                "torch.jit.save would save a module without a forward. "
                "Decorate it with @torch.jit.script_method."
            )
