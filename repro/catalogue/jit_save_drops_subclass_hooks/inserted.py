"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there."""

import torch


def refuse_dropped_hooks(m):
    # the compiled module is what is saved: a hook registered after TorchScript compiled a
    # module would be lost without a word (the hooks compiled with it are in it)
    for module in m.modules():
        if not isinstance(module, torch.jit.ScriptModule):
            continue
        if not module._c._has_method("forward"):
            continue  # no compiled forward: what is saved cannot be called at all
        for kind, hooks, compiled in (
            ("forward hook", module._forward_hooks, module._c._get_forward_hooks()),
            ("pre-hook", module._forward_pre_hooks, module._c._get_forward_pre_hooks()),
        ):
            unmatched = [hook.name for hook in compiled]  # named by their functions
            for hook in hooks.values():
                name = getattr(hook, "__name__", None) or getattr(hook, "name", "")
                if name not in unmatched:
                    raise RuntimeError(
                        f"{type(module).__name__} has a {kind} registered after TorchScript "
                        "compiled it: torch.jit.save would save the module without it. "
                        "Register it in __init__ (or before torch.jit.script), typed."
                    )
                unmatched.remove(name)
