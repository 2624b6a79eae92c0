"""The scenario table itself: what a scenario is, the registry, the tiers, and what no scenario covers.

Each body gets the model and a ``Recorder`` and only *does* things; the oracle compares what was
recorded. ``api`` is the row a scenario belongs to (an ``nn.Module`` method, a global hook function, a
function users apply to modules such as ``copy.deepcopy``, or a protocol such as ``setattr``). ``needs``
names what it calls, with a keyword argument in brackets when it relies on one
(``"register_full_backward_hook(prepend)"``): ``nn.Module`` methods, ``torch.nn.modules.module``
functions, or dotted paths (``torch.func.functional_call``); a torch that lacks any of them reports the
scenario as ``unavailable``. ``device`` names an accelerator the scenario needs (``.cuda()``): without
one it is ``not run``, which is not ``unavailable``. ``model`` names the shape it runs on
(``repro.engine.models.MODELS``); ``where`` says, for the support table, under which condition its
outcome holds when the API's scenarios disagree ("on a submodule").
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch

from repro.engine.models import shapes_offering
from repro.engine.recorder import Recorder
from repro.traits import Traits
from repro.vocabulary import Tier

Body = Callable[[Any, Recorder], None]


@dataclass(frozen=True)
class Scenario:
    api: str
    name: str
    body: Body
    needs: tuple[str, ...]  # what it calls: nn.Module methods, module functions or dotted paths, "api(keyword)"
    downstream: bool = False  # mirrors a behaviour torch_npu's TestScriptModuleHooks checks
    tier: Tier = Tier.DEFAULT  # which runs include it: a key of TIERS
    model: str = "flat"  # the shape it runs on (repro.engine.models.MODELS)
    device: str = ""  # an accelerator it needs ("cuda"); without one the scenario is not run
    devices: int = 1  # how many of that accelerator it needs (DataParallel: two, else it just calls the module)
    where: str = ""  # the condition its outcome holds under, where the API's scenarios disagree
    shapes: tuple[str, ...] = ()  # every shape it can be built on, ``model`` (its own) first
    traits: Traits | None = None  # a generated model's (the explorer's), which has no named shape

    @property
    def key(self) -> str:
        """Its name, and the shape it runs on where that is not its own."""
        own = not self.shapes or self.model == self.shapes[0]
        return f"{self.api}: {self.name}" + ("" if own else f" [on {self.model}]")

    def on(self, shape: str) -> Scenario:
        """The same scenario built on another of its declared shapes."""
        assert shape in self.shapes, (self.key, shape)
        return replace(self, model=shape)

    @property
    def apis(self) -> set[str]:
        """Its row and every API it calls, without keywords: what a catalogued bug's scope is matched on."""
        return {self.api, *(need.split("(")[0] for need in self.needs)}


SCENARIOS: list[Scenario] = []

# Which runs include a scenario: ``default`` ones run in every run; the others, which the default run
# leaves out for speed, only when asked (``--slow``, ``--support-table``, or ``--bug`` for a bug's own).
# Tier -> (adjective, why). A variant checks more of what a default scenario of its API checks, or only
# part of it, or an API beyond the hooks (the support table's rows).
TIERS = {
    Tier.DEFAULT: ("default", "in every run"),
    Tier.VARIANT: (
        "variant",
        "ordering, removal, returned values, keywords, other model shapes, part "
        "of a default scenario's check, or nn.Module APIs beyond the hooks",
    ),
    Tier.SLOW: ("slow", "compiling, exporting, DDP and non-reentrant checkpointing load dynamo or gloo"),
}


def scenario(
    api: str,
    name: str,
    *also: str,
    downstream: bool = False,
    tier: Tier = Tier.DEFAULT,
    model: str = "flat",
    called: bool = True,
    device: str = "",
    devices: int = 1,
    where: str = "",
    requires: tuple[str, ...] = ("root",),
) -> Callable[[Body], Body]:
    """Add the decorated body to the table under ``api``; ``also`` lists further needs. ``called=False``
    for a row that names no callable (``setattr``: a protocol every torch has). ``model`` is its own
    shape; ``requires`` names what the body needs of a shape (``repro.engine.models.TRAITS``), and the
    scenario is declared on every shape that offers it (exploration runs it on each). By default it
    needs ``root``: a method called on ``m`` tests the subclass only where ``m`` is the subclass."""
    assert tier in TIERS, tier

    def add(body: Body) -> Body:
        needs = (api, *also) if called else also
        offering = shapes_offering(requires)
        assert model in offering, f"{api}: {name}: its own shape {model!r} lacks what it requires, {requires}"
        declared = (model, *(shape for shape in offering if shape != model))
        SCENARIOS.append(
            Scenario(api.split("(")[0], name, body, needs, downstream, tier, model, device, devices, where, declared)
        )
        return body

    return add


def missing_needs(scenario: Scenario) -> list[str]:
    """The APIs or keywords ``scenario`` needs that this torch lacks: ``nn.Module`` methods, the
    global ``register_module_*`` functions of ``torch.nn.modules.module``, and dotted paths
    (``torch.func.functional_call``)."""
    missing = []
    for need in scenario.needs:
        api, _, kwarg = need.rstrip(")").partition("(")
        found = find_api(api)
        if found is None or (kwarg and kwarg not in inspect.signature(found).parameters):
            missing.append(need)
    return missing


def find_api(api: str) -> Any:
    """The object ``api`` names on this torch, or None: a dotted path is imported (its longest
    importable module prefix), a ``register_module_*`` name is a global hook function, any other
    name an ``nn.Module`` attribute."""
    from torch import nn
    from torch.nn.modules import module

    if "." not in api:
        return getattr(module if api.startswith("register_module_") else nn.Module, api, None)
    parts = api.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name, None)
        return found
    return None


def fingerprint(scenarios: list[Scenario] | None = None) -> str:
    """A short hash of the scenario table (each scenario's key, shapes, requirements and tier): support
    columns measured with different tables are not compared as if they were one."""
    import hashlib

    rows = sorted(
        f"{s.key}|{s.model}|{','.join(s.shapes)}|{s.tier}|{','.join(s.needs)}" for s in scenarios or SCENARIOS
    )
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()[:12]


def uncovered_hook_apis() -> list[str]:
    """Hook APIs the installed torch offers that no scenario calls: every ``register_*hook*`` method
    of ``nn.Module`` (the private ones libraries use included) and every global ``register_module_*``
    function. A new one in a torch release fails a test until a scenario covers it."""
    from torch.nn.modules import module

    offered = {name for name in dir(torch.nn.Module) if name.lstrip("_").startswith("register") and "hook" in name}
    offered |= {name for name in dir(module) if name.startswith("register_module_")}
    return sorted(offered - {api for s in SCENARIOS for api in s.apis})


def public_module_methods() -> list[str]:
    """Every public method of the installed ``nn.Module``: the support table's contract."""
    return sorted(
        name for name in dir(torch.nn.Module) if not name.startswith("_") and callable(getattr(torch.nn.Module, name))
    )


def uncovered_module_methods() -> list[str]:
    """Public ``nn.Module`` methods no scenario covers: a new one in a torch release fails a test."""
    return sorted(set(public_module_methods()) - {api for s in SCENARIOS for api in s.apis})
