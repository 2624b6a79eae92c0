import torch
from torch.nn.modules.module import register_module_forward_hook

from repro.catalogue.pieces import Net

seen = []
register_module_forward_hook(  # a compiled child's class is RecursiveScriptModule: original_name is its own
    lambda module, args, output: seen.append(getattr(module, "original_name", type(module).__name__))
)
Net()(torch.ones(1, 2))
assert seen == ["Linear", "Net"], f"global forward hooks ran for {seen}, eager runs them for Linear and Net"
