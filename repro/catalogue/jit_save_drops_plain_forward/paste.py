import io

import torch

from repro.catalogue.pieces import PlainForward

buffer = io.BytesIO()
torch.jit.save(torch.jit.script(PlainForward()), buffer)  # succeeds; script returns the model as it is
buffer.seek(0)
loaded = torch.jit.load(buffer)
assert hasattr(loaded, "forward"), "torch.jit.save kept no forward: the loaded module cannot be called"
