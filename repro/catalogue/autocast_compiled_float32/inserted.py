"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""

import torch


def jit_autocast_off():
    # TorchScript's own autocast pass (torch/csrc/jit/passes/autocast.cpp) casts with a policy of its
    # own: a compiled forward under torch.autocast then computes in other dtypes than its eager twin.
    # Off, a compiled graph's ops dispatch through eager autocast as Python code's do; opt in with
    # torch._C._jit_set_autocast_mode(True).
    torch._C._jit_set_autocast_mode(False)
