"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there."""

import copy

import torch


def leaves(self, memo):
    clone = torch.jit._recursive.wrap_cpp_module(copy.deepcopy(self._c, memo))
    # the C++ copy clones each tensor with its history: the copy's parameters are leaves
    # of their own (in place: one two names share stays shared), as eager's are
    for _, param in clone.named_parameters(remove_duplicate=False):
        if not param.is_leaf:
            param.detach_().requires_grad_(True)
    return clone
