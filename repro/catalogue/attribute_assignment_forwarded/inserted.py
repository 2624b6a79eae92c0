"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""

import torch


def check_assignments(self, attr, value):
    inner = self._actual_script_module
    if attr == "training" and not isinstance(value, bool):
        raise TypeError(
            f"cannot assign {type(value).__name__} to training of a ScriptModule: "
            "its compiled type holds a bool"
        )
    if value is None and (attr in inner._parameters or attr in inner._buffers):
        raise RuntimeError(
            f"cannot assign None to '{attr}' of a ScriptModule: "
            "its compiled type holds a Tensor there"
        )
    if attr in inner._parameters and not isinstance(value, torch.nn.Parameter):
        raise TypeError(
            f"cannot assign '{torch.typename(value)}' as parameter '{attr}' "
            "(torch.nn.Parameter or None expected)"
        )


class ScriptModule(torch.nn.Module):
    def __delattr__(self, attr: str) -> None:
        inner = self.__dict__.get("_actual_script_module")
        if inner is not None and attr not in self.__dict__ and attr in inner.__dict__:
            # a plain attribute __setattr__ forwarded to the compiled module: delete it there
            return delattr(inner, attr)
        return super().__delattr__(attr)
