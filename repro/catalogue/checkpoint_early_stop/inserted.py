"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""

import weakref

import torch
from torch.utils.checkpoint import (
    CheckpointError,
    _recomputation_hook,
    _run_fn_with_dynamo_disabled,
)


def recompute_without_early_stop(frame, gid, args):
    # Early stop's exception can arrive as another one: TorchScript's
    # interpreter raises what a hook raised in compiled code as RuntimeError.
    # Once every tensor was recomputed that was the stop; recompute it all
    # again without early stop, for the checks below.
    stopped = frame.recomp_counter[gid] == len(frame.weak_holders)
    if not (frame.early_stop and stopped):
        raise
    frame.early_stop = False
    frame.recomp_counter[gid] = 0
    frame.recomputed[gid] = weakref.WeakKeyDictionary()
    for weak_holder in frame.weak_holders:
        saved = weak_holder()
        if saved is not None:
            saved.handles.pop(gid, None)
    try:
        with _recomputation_hook(
            weakref.ref(frame), gid
        ), torch.autograd.enable_grad():
            _run_fn_with_dynamo_disabled(frame.recompute_fn, *args)
    except Exception as err:
        if frame.recomp_counter[gid] <= len(frame.weak_holders):
            raise
        raise CheckpointError(
            "torch.utils.checkpoint: recomputing the forward in compiled "
            "(TorchScript) code "
            "saved more tensors than its first run did: TorchScript "
            "optimizes a forward after its first call with inputs that "
            "require grad. Run the model once on such inputs before "
            "checkpointing it."
        ) from err
