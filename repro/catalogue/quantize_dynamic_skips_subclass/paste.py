import torch

from repro.catalogue.pieces import Net

quantized = torch.ao.quantization.quantize_dynamic(Net(), {torch.nn.Linear}, dtype=torch.qint8)
quantized_linear = torch.ao.nn.quantized.dynamic.Linear
assert isinstance(quantized.linear, quantized_linear), "quantize_dynamic quantized nothing and said nothing"
