"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""

import copy

import torch


class ScriptModule(torch.nn.Module):
    def __deepcopy__(self, memo):
        """A copy of this class, with its hooks and Python methods: without it, ``__getattr__``
        finds the compiled module's ``__deepcopy__``, whose copy is a bare
        RecursiveScriptModule."""
        clone = type(self).__new__(type(self))
        memo[id(self)] = clone
        for name, value in self.__dict__.items():
            clone.__dict__[name] = copy.deepcopy(value, memo)
        # the compiled module's copy clones its tensors with their history: its parameters
        # must be leaves again, or backward through the copy leaves them without gradients
        for name, param in list(clone.named_parameters()):
            if not param.is_leaf:
                owner, _, leaf = name.rpartition(".")
                parameter = torch.nn.Parameter(param.detach(), param.requires_grad)
                setattr(clone.get_submodule(owner), leaf, parameter)
        return clone
