"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""

import sys
from typing import Any

import torch


class ScriptModule(torch.nn.Module):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Calls the module; what its compiled code raised is raised as its own class,
        as a Python forward's would be: the interpreter raises torch.jit.Error, keeping
        the class name."""
        try:
            return super().__call__(*args, **kwargs)
        except torch.jit.Error as err:
            qualified = torch._C._get_caught_jit_exception_class_name()
            module, _, name = qualified.rpartition(".")
            raised = getattr(sys.modules.get(module), name, None)
            if not (isinstance(raised, type) and issubclass(raised, Exception)):
                raise
            if qualified not in str(err):  # raised by Python code: the name is an older one
                raise
            try:
                original = raised(torch._C._get_caught_jit_exception_original_msg())
            except Exception:
                raise err from None
            raise original from err
