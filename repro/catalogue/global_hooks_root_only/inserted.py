"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""

import torch
from torch.nn.modules.module import (
    _global_backward_hooks,
    _global_backward_pre_hooks,
    _global_forward_hooks,
    _global_forward_pre_hooks,
)


def refuse_calls_that_skip_children(self):
    if (
        (
            _global_forward_hooks
            or _global_forward_pre_hooks
            or _global_backward_hooks
            or _global_backward_pre_hooks
        )
        and isinstance(self, torch.jit.ScriptModule)
        and next(self.children(), None) is not None
        and isinstance(
            next(k.__dict__["forward"] for k in type(self).__mro__ if "forward" in k.__dict__),
            getattr(torch.jit._script, "_CachedForward", ()),
        )
    ):
        raise RuntimeError(
            f"global module hooks would skip the children of this {type(self).__name__}: "
            "its compiled forward calls them inside TorchScript, not through Python. "
            "Give it a plain Python forward, or remove the global hooks."
        )
