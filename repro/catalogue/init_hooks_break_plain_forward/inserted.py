"""The lines the upstream patch inserts into torch (read by ``repro.catalogue.texts.inserted``;
never imported). A function's body is inserted into one of torch's functions, its parameters
naming what the lines use there; a method of a class is added to torch's class of that name."""


def refuse_hooks_without_forward(nn_module, hook_stubs, pre_hook_stubs, method_stubs):
    if (hook_stubs or pre_hook_stubs) and not any(
        s.def_.name().name == "forward" for s in method_stubs
    ):
        raise RuntimeError(
            f"{type(nn_module).__name__} has forward hooks or pre-hooks, and its forward "
            "is not compiled: hooks registered before it was compiled need a compiled forward. "
            "Decorate forward with "
            "@torch.jit.script_method, or register the hooks after construction."
        )
