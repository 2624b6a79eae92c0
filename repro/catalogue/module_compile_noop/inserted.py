"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""

import torch


class ScriptModule(torch.nn.Module):
    def compile(self, *args, **kwargs):
        """Refuse: torch.compile cannot trace a ScriptModule, so Module.compile would compile
        nothing."""
        raise RuntimeError(
            "Module.compile() cannot compile a ScriptModule: torch.compile does not trace "
            "TorchScript, and every call would run "
            "uncompiled. Compile an eager nn.Module version of the model instead."
        )
