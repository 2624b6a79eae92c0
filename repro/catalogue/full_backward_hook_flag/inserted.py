"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""


def keep_the_flag_on_the_wrapper(self, attr, value):
    if attr == "_is_full_backward_hook":
        # Module's backward-hook mode lives on the Python wrapper, where
        # Module._get_backward_hooks reads it; the scripted module has no slot for it.
        return super().__setattr__(attr, value)
