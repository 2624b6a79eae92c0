"""Record what a scenario observes, as plain JSON-like data the two twins can be compared on.

A hook "works" only if its calls, their arguments and their effects match the eager
twin, so everything a hook sees or changes is written down here in a comparable form:
tensors as class, shape and rounded values, the module argument as whether it is the model
itself, state dicts as key -> tensor summary. The class of every other module met (a hook's
argument, a child returned) is kept apart, under ``types``: a ScriptModule subclass's children are
``RecursiveScriptModule``s, which the oracle names as TorchScript's design, not as the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from repro.engine.models import SIZE, Size, inputs

INPUT = inputs(SIZE)  # [[1.0, 2.0], [-3.0, 0.5]]
FAKE = getattr(getattr(torch, "_subclasses", None), "FakeTensor", ())  # a tensor tracing uses: no data


def _values(tensor: torch.Tensor) -> list[float] | None:
    """The tensor's values, rounded; None for one with no storage of its own (a batched tensor a hook
    is handed under ``torch.func.vmap``): reading them raised inside the hook, so both twins' calls
    raised and what the hooks saw before went unseen."""
    try:
        return [round(v, 4) for v in tensor.detach().cpu().flatten().tolist()]
    except RuntimeError:
        return None


class Recorder:
    """Collects hook calls (in order) and named facts for one run of one scenario."""

    def __init__(
        self,
        model: nn.Module,
        device: str,
        extra: Callable[[str, int], tuple] = lambda device, features: (),
        size: Size = SIZE,
    ) -> None:
        self.model = model
        self.device = device
        self.size = size
        # the forward arguments after the input, made anew for each call, at the model's features
        self.extra: Callable[[str], tuple] = lambda device: extra(device, size.features)
        self.made: list[torch.Tensor] = []  # every input made, for ``gradients``
        self.events: list[list[Any]] = []
        self.facts: dict[str, Any] = {}
        self.types: dict[str, str] = {}  # module name -> the class of the object met under that name
        self._backwards = 0

    def hook(self, label: str, returns: Callable[..., Any] | None = None) -> Callable[..., Any]:
        """A hook that logs its label and arguments, then returns ``returns(*args)`` or None."""

        def hook(*args: Any) -> Any:
            self.events.append([label, *(self.summary(a) for a in args)])
            return returns(*args) if returns else None

        return hook

    def mark(self, label: str) -> Callable[..., None]:
        """A hook that logs only its label: for order and call-count scenarios."""
        return lambda *args: self.events.append([label])

    def module_hook(self, label: str) -> Callable[..., None]:
        """A hook that logs its label and only its first argument, the module it was given."""
        return lambda module, *rest: self.events.append([label, self.summary(module)])

    def note(self, key: str, value: Any) -> None:
        self.facts[key] = self.summary(value)

    def attempt(self, key: str, action: Callable[[], Any]) -> Any:
        """Do ``action`` and note its result, or the type of the error it raised: for what eager itself
        refuses (a plain tensor assigned to a parameter), so that both twins' answers are compared."""
        try:
            result = action()
        except Exception as err:
            self.facts[key] = f"raised {type(err).__name__}"
            return None
        self.note(key, result)
        return result

    def parameters(self, key: str = "parameters") -> None:
        """Note every parameter and buffer: name, dtype, device and values."""
        self.facts[key] = {
            name: [str(t.dtype), t.device.type, self.summary(t)]
            for name, t in [*self.model.named_parameters(), *self.model.named_buffers()]
        }

    def input(self, values: Any = None) -> torch.Tensor:
        """A leaf that requires grad: ``values``, or the input at the run's size."""
        made = torch.tensor(inputs(self.size) if values is None else values, device=self.device, requires_grad=True)
        self.made.append(made)
        return made

    def gradients(self) -> None:
        """Note, after a call, the gradient (None or a tensor, with its dtype) of every parameter, buffer
        and input made: how a workaround is judged beyond what a scenario notes (``repro.proof``)."""
        tensors = [*self.model.named_parameters(), *self.model.named_buffers()]
        self.facts["gradients after the call"] = {
            **{name: self.summary(t.grad) for name, t in tensors},
            **{f"input {n}": self.summary(t.grad) for n, t in enumerate(self.made, start=1)},
        }

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The model called on ``x`` and the model's further arguments."""
        return self.model(x, *self.extra(self.device))

    def backward(self, x: torch.Tensor | None = None) -> None:
        """Forward, ``.sum().backward()``, then note every gradient it produced."""
        self._backwards += 1
        x = self.input() if x is None else x
        extra = self.extra(self.device)
        self.model(x, *extra).sum().backward()
        tag = f"backward {self._backwards}"
        self.note(f"{tag}: input grad", x.grad)
        for position, value in enumerate(extra, start=2):
            if isinstance(value, torch.Tensor):
                self.note(f"{tag}: input {position} grad", value.grad)
        for name, param in self.model.named_parameters():
            self.note(f"{tag}: {name}.grad", param.grad)
            param.grad = None

    def observation(self) -> dict[str, Any]:
        return {"hook calls": self.events, **self.facts, **({"types": self.types} if self.types else {})}

    def summary(self, value: Any) -> Any:
        """``value`` as data that compares and pickles: a traced (fake) tensor's values are symbols, so
        none are kept (export and torch.compile call hooks on fake tensors while they trace)."""
        if value is self.model:
            return "<the module itself>"
        if isinstance(value, nn.Module):  # a scripted child is still the Linear it was made from; its class apart
            name = getattr(value, "original_name", type(value).__name__)
            self.types[name] = type(value).__name__
            return f"<another module: {name}>"
        if isinstance(value, torch.Tensor):
            return {
                "class": type(value).__name__,
                "dtype": str(value.dtype),  # autocast and precision changes show only here
                "shape": list(value.shape),
                "values": None if isinstance(value, FAKE) else _values(value),
                "requires_grad": value.requires_grad,
            }
        if isinstance(value, dict):
            return {str(k): self.summary(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.summary(v) for v in value]
        if value is None or isinstance(value, (str, int, float, bool)):
            return value
        return f"<{type(value).__name__}>"


def changed_classes(original: Any, duplicate: Any) -> list[str]:
    """The children (by path) whose class in ``duplicate`` is not their class in ``original``."""
    copied = dict(duplicate.named_modules())
    return [name for name, module in original.named_modules() if name and type(copied.get(name)) is not type(module)]
