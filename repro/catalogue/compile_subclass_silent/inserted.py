"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""

import torch


def refuse_script_modules(fn):
    scripted = [
        name
        for name, sub in fn.named_modules()
        if isinstance(sub, torch.jit.ScriptModule)
    ]
    if scripted and type(fn) is not torch.jit._script.RecursiveScriptModule:
        what = (
            "is a ScriptModule"
            if scripted[0] == ""
            else f"holds the ScriptModule {scripted[0]!r}"
        )
        raise RuntimeError(
            f"torch.compile does not trace TorchScript: this model {what}, "
            "which would run uncompiled. "
            "Compile an eager nn.Module version of it instead."
        )
