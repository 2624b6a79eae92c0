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
        # the compiled module's copy holds bare copies of its children: a subclass child
        # is copied as itself, around the compiled copy of it
        compiled = clone.__dict__["_actual_script_module"]
        for name, child in self.named_children():
            if "_actual_script_module" in child.__dict__:
                memo[id(child.__dict__["_actual_script_module"])] = getattr(compiled, name)
                compiled._modules[name] = copy.deepcopy(child, memo)
        # the compiled module's copy clones its tensors with their history, as plain
        # tensors: its parameters must be nn.Parameter leaves again (one per copied tensor:
        # a shared one stays shared), or backward through the copy leaves them without
        # gradients
        made = {}
        for qualified, param in list(clone.named_parameters(remove_duplicate=False)):
            if isinstance(param, torch.nn.Parameter) and param.is_leaf:
                continue
            if id(param) not in made:
                own = torch.nn.Parameter(param.detach(), param.requires_grad)
                made[id(param)] = (param, own)
            *path, name = qualified.split(".")
            owner = clone
            for part in path:
                owner = getattr(owner, part)
            setattr(owner, name, made[id(param)][1])
        return clone
