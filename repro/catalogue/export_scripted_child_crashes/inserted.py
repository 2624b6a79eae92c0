"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""

import torch


def refuse_scripted_submodules(mod):
    scripted = [
        name
        for name, sub in mod.named_modules()
        if isinstance(sub, torch.jit.ScriptModule) and sub._c._has_method("forward")
    ]
    if scripted:
        raise ValueError(
            f"Exporting a module that holds a ScriptModule ({scripted[0]!r}) is not supported: "
            "export traces Python code, and that forward is TorchScript. "
            "Export the eager version of that submodule instead."
        )
