"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there."""


def kept(script_module, nn_module):
    # the buffers registered with persistent=False stay out of state_dict, as on nn_module
    script_module._non_persistent_buffers_set = set(nn_module._non_persistent_buffers_set)
