"""torch_npu's ``TestScriptModuleHooks`` (test/test_jit_api.py), rewritten as the behaviour users want.

Nineteen hook behaviours on a ``torch.jit.ScriptModule`` subclass with a plain ``def forward`` (the
shape torch_npu's suite uses), one table row each. The full backward hook's row names the catalogued
bug that breaks it: while the ledger says that bug is present on the installed torch the test is an
expected failure (for that bug's reason only); once the ledger says fixed it must pass.

    pytest examples/downstream/test_script_module_hooks.py     (or: python test_script_module_hooks.py)
"""

from __future__ import annotations

import unittest
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from repro.expect import known_upstream_bug

WEIGHT = torch.tensor([[1.0, -2.0], [0.5, 3.0]])
X = [[1.0, 2.0]]


class Net(torch.jit.ScriptModule):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def backward(model: Net) -> torch.Tensor:
    """One forward and backward of ``X`` through ``model``; the input, with its gradient."""
    x = torch.tensor(X, requires_grad=True)
    model(x).sum().backward()
    return x


def load_pre(calls: list, edit: Callable[[dict], None] = lambda state: None) -> Callable:
    """A ``load_state_dict`` pre hook with all eight arguments, recording them."""

    def hook(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        calls.append((module, prefix, strict, missing, unexpected, errors))
        edit(state_dict)

    return hook


# --- the table: one behaviour per function; BUGS names the catalogued bug that breaks a row --------


def full_backward_hook_called_with_gradients(m: Net) -> None:
    calls: list[Any] = []
    m.register_full_backward_hook(lambda module, grad_input, grad_output: calls.append((grad_input, grad_output)))
    x = backward(m)
    assert len(calls) == 1, f"the full backward hook ran {len(calls)} times, expected once"
    (grad_input,), (grad_output,) = calls[0]
    torch.testing.assert_close(grad_output, torch.ones(1, 2))
    torch.testing.assert_close(grad_input, torch.ones(1, 2) @ WEIGHT)
    torch.testing.assert_close(x.grad, grad_input)


def full_backward_pre_hook_called_with_grad_output(m: Net) -> None:
    calls: list[Any] = []
    m.register_full_backward_pre_hook(lambda module, grad_output: calls.append(grad_output))
    backward(m)
    assert len(calls) == 1
    torch.testing.assert_close(calls[0][0], torch.ones(1, 2))


def full_backward_pre_hook_return_replaces_grad_output(m: Net) -> None:
    m.register_full_backward_pre_hook(lambda module, grad_output: tuple(g * 0 for g in grad_output))  # type: ignore[attr-defined]  # a tuple here
    torch.testing.assert_close(backward(m).grad, torch.zeros(1, 2))


def full_backward_pre_hook_prepend_runs_first(m: Net) -> None:
    order: list[Any] = []
    m.register_full_backward_pre_hook(lambda *args: order.append("first registered"))
    m.register_full_backward_pre_hook(lambda *args: order.append("prepended"), prepend=True)
    backward(m)
    assert order == ["prepended", "first registered"], order


def full_backward_pre_hook_remove(m: Net) -> None:
    calls: list[Any] = []
    handle = m.register_full_backward_pre_hook(lambda *args: calls.append(1))
    backward(m)
    handle.remove()
    backward(m)
    assert calls == [1], calls


def load_state_dict_pre_hook_runs_before_post_hook(m: Net) -> None:
    order: list[Any] = []
    m.register_load_state_dict_post_hook(lambda module, keys: order.append("post"))
    m.register_load_state_dict_pre_hook(load_pre([], edit=lambda state: order.append("pre")))
    m.load_state_dict(m.state_dict())
    assert order == ["pre", "post"], order


def load_state_dict_pre_hook_rewrites_state(m: Net) -> None:
    def zero(state: dict) -> None:
        for key in state:
            state[key] = torch.zeros_like(state[key])

    m.register_load_state_dict_pre_hook(load_pre([], edit=zero))
    m.load_state_dict(m.state_dict())
    torch.testing.assert_close(m.linear.weight.detach(), torch.zeros(2, 2))


def load_state_dict_pre_hook_gets_all_arguments(m: Net) -> None:
    calls: list[Any] = []
    m.register_load_state_dict_pre_hook(load_pre(calls))
    m.load_state_dict(m.state_dict())
    assert len(calls) == 1 and calls[0][1:] == ("", True, [], [], []), calls


def load_state_dict_pre_hook_gets_the_module(m: Net) -> None:
    modules = []
    m.register_load_state_dict_pre_hook(lambda module, *args: modules.append(module))
    m.load_state_dict(m.state_dict())
    assert len(modules) == 1 and modules[0] is m


def load_state_dict_pre_hook_remove(m: Net) -> None:
    calls: list[Any] = []
    handle = m.register_load_state_dict_pre_hook(lambda *args: calls.append(1))
    m.load_state_dict(m.state_dict())
    handle.remove()
    m.load_state_dict(m.state_dict())
    assert calls == [1], calls


def load_state_dict_post_hook_gets_the_module(m: Net) -> None:
    modules = []
    m.register_load_state_dict_post_hook(lambda module, keys: modules.append(module))
    m.load_state_dict(m.state_dict())
    assert len(modules) == 1 and modules[0] is m


def load_state_dict_post_hook_remove(m: Net) -> None:
    calls: list[Any] = []
    handle = m.register_load_state_dict_post_hook(lambda *args: calls.append(1))
    m.load_state_dict(m.state_dict())
    handle.remove()
    m.load_state_dict(m.state_dict())
    assert calls == [1], calls


def state_dict_pre_hook_runs_before_post_hook(m: Net) -> None:
    order: list[Any] = []
    m.register_state_dict_post_hook(lambda module, state, prefix, meta: order.append(("post", list(state))))
    m.register_state_dict_pre_hook(lambda module, prefix, keep_vars: order.append("pre"))
    m.state_dict()
    assert order == ["pre", ("post", ["linear.weight", "linear.bias"])], order


def state_dict_pre_hook_gets_prefix_and_keep_vars(m: Net) -> None:
    calls: list[Any] = []
    m.register_state_dict_pre_hook(lambda module, prefix, keep_vars: calls.append((module, prefix, keep_vars)))
    m.state_dict()
    m.state_dict(keep_vars=True)
    assert calls == [(m, "", False), (m, "", True)], calls


def state_dict_pre_hook_gets_the_module(m: Net) -> None:
    modules = []
    m.register_state_dict_pre_hook(lambda module, *args: modules.append(module))
    m.state_dict()
    assert len(modules) == 1 and modules[0] is m


def state_dict_pre_hook_remove(m: Net) -> None:
    calls: list[Any] = []
    handle = m.register_state_dict_pre_hook(lambda *args: calls.append(1))
    m.state_dict()
    handle.remove()
    m.state_dict()
    assert calls == [1], calls


def state_dict_post_hook_gets_dict_prefix_and_metadata(m: Net) -> None:
    calls: list[Any] = []
    m.register_state_dict_post_hook(
        lambda module, state, prefix, meta: calls.append((module, list(state), prefix, meta))
    )
    m.state_dict()
    assert len(calls) == 1, calls
    module, keys, prefix, meta = calls[0]
    assert module is m and keys == ["linear.weight", "linear.bias"] and prefix == "" and "version" in meta, calls


def state_dict_post_hook_gets_the_module(m: Net) -> None:
    modules = []
    m.register_state_dict_post_hook(lambda module, *args: modules.append(module))
    m.state_dict()
    assert len(modules) == 1 and modules[0] is m


def state_dict_post_hook_remove(m: Net) -> None:
    calls: list[Any] = []
    handle = m.register_state_dict_post_hook(lambda *args: calls.append(1))
    m.state_dict()
    handle.remove()
    m.state_dict()
    assert calls == [1], calls


BEHAVIOURS: list[Callable[[Net], None]] = [
    full_backward_hook_called_with_gradients,
    full_backward_pre_hook_called_with_grad_output,
    full_backward_pre_hook_return_replaces_grad_output,
    full_backward_pre_hook_prepend_runs_first,
    full_backward_pre_hook_remove,
    load_state_dict_pre_hook_runs_before_post_hook,
    load_state_dict_pre_hook_rewrites_state,
    load_state_dict_pre_hook_gets_all_arguments,
    load_state_dict_pre_hook_gets_the_module,
    load_state_dict_pre_hook_remove,
    load_state_dict_post_hook_gets_the_module,
    load_state_dict_post_hook_remove,
    state_dict_pre_hook_runs_before_post_hook,
    state_dict_pre_hook_gets_prefix_and_keep_vars,
    state_dict_pre_hook_gets_the_module,
    state_dict_pre_hook_remove,
    state_dict_post_hook_gets_dict_prefix_and_metadata,
    state_dict_post_hook_gets_the_module,
    state_dict_post_hook_remove,
]
BUGS = {full_backward_hook_called_with_gradients: "full-backward-hook-flag"}


class TestScriptModuleHooks(unittest.TestCase):
    """One test per row of ``BEHAVIOURS``, added below; each on a fresh ``Net`` with fixed weights."""

    def model(self) -> Net:
        model = Net()
        with torch.no_grad():
            model.linear.weight.copy_(WEIGHT)
            model.linear.bias.zero_()
        return model


def _test(behaviour: Callable[[Net], None]) -> Callable[[TestScriptModuleHooks], None]:
    def test(self: TestScriptModuleHooks) -> None:
        behaviour(self.model())

    test.__name__ = f"test_{behaviour.__name__}"
    test.__qualname__ = f"{TestScriptModuleHooks.__name__}.{test.__name__}"
    test.__doc__ = behaviour.__doc__
    return known_upstream_bug(BUGS[behaviour])(test) if behaviour in BUGS else test


for _behaviour in BEHAVIOURS:
    setattr(TestScriptModuleHooks, f"test_{_behaviour.__name__}", _test(_behaviour))


if __name__ == "__main__":
    unittest.main()
