"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""

import torch


def refuse_script_modules(model):
    scripted = [
        name for name, sub in model.named_modules() if isinstance(sub, torch.jit.ScriptModule)
    ]
    if scripted:
        what = (
            "is a ScriptModule" if scripted[0] == "" else f"holds the ScriptModule {scripted[0]!r}"
        )
        raise RuntimeError(
            f"quantize_dynamic quantizes eager modules only, and this model {what}, "
            "whose children TorchScript compiled: "
            "nothing of it would be quantized. Quantize the eager model before scripting it, "
            "or use quantize_dynamic_jit."
        )
