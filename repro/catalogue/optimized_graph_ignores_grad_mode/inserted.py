"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""

from typing import Any

import torch


class _UnoptimizedForward:
    """A compiled forward called outside plain grad mode (no_grad, inference_mode, a
    torch.func transform). The profiling executor's optimized graph holds autograd as it
    was profiled and checks none of these modes, so such calls run the forward's graph
    through an executor of their own, unoptimized, where every op dispatches as in eager."""

    def __init__(self, module: Any) -> None:
        self._module = module
        self._method = module._c._get_method("forward")

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._method, attr)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        values = list(args)
        for argument in self._method.schema.arguments[1 + len(args) :]:
            if argument.name in kwargs:
                values.append(kwargs.pop(argument.name))
            elif argument.has_default_value():
                values.append(argument.default_value)
            else:
                raise TypeError(f"forward() missing required argument {argument.name!r}")
        if kwargs:
            raise TypeError(f"forward() got unexpected keyword arguments {sorted(kwargs)}")
        function = self._module.__dict__.get("_unoptimized_forward")
        if function is None:
            function = torch._C._create_function_from_graph(
                "forward_unoptimized", self._method.graph
            )
            self._module.__dict__["_unoptimized_forward"] = function
        with torch.jit.optimized_execution(False):
            return function(self._module._c, *values)


class _CachedForward(torch.nn.Module):
    def __get__(self, obj, cls):
        plain_grad_mode = (
            torch.is_grad_enabled()
            and not torch.is_inference_mode_enabled()
            and torch._C._functorch.maybe_current_level() is None
        )
        if obj is not None and not plain_grad_mode and obj._c._has_method("forward"):
            return _UnoptimizedForward(obj)
        return self.__getattr__("forward")  # type: ignore[attr-defined]
