"""The scenario table: one small body per behaviour, run unchanged on both twins, one module per area.

``table`` defines a scenario and the registry; each area module registers its scenarios on import:
``hooks`` (the hook surface, local and global), ``module_api`` (the rest of ``nn.Module``'s public
methods), ``attributes`` (assigning and deleting parameters, buffers, children and plain values),
``copying`` (``copy.copy``, ``copy.deepcopy``, pickling) and ``utilities`` (the ``torch.nn.utils``,
``torch.func`` and ``torch.utils.checkpoint`` functions users apply to modules, and an optimizer step).
"""

from __future__ import annotations

from repro.engine.scenarios import attributes as attributes  # each area registers its scenarios on import
from repro.engine.scenarios import copying as copying
from repro.engine.scenarios import handed_on as handed_on
from repro.engine.scenarios import hooks as hooks
from repro.engine.scenarios import lifecycle as lifecycle
from repro.engine.scenarios import module_api as module_api
from repro.engine.scenarios import utilities as utilities
from repro.engine.scenarios.table import (
    SCENARIOS,
    TIERS,
    Body,
    Scenario,
    fingerprint,
    public_module_methods,
    scenario,
    uncovered_hook_apis,
    uncovered_module_methods,
)

__all__ = [
    "SCENARIOS",
    "TIERS",
    "Body",
    "Scenario",
    "fingerprint",
    "public_module_methods",
    "scenario",
    "uncovered_hook_apis",
    "uncovered_module_methods",
]
