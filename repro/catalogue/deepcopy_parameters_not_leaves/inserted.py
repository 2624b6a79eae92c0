"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there."""

import copy

import torch


def leaves(self, memo):
    clone = torch.jit._recursive.wrap_cpp_module(copy.deepcopy(self._c, memo))
    # the C++ copy clones each tensor with its history, as a plain tensor:
    # the copy's parameters are leaves, nn.Parameters of its own as eager's
    # are (one per copied tensor: a shared one stays shared)
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
