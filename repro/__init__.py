"""Prove, explain and track the ScriptModule ``register_full_backward_hook`` bug and its siblings.

One run of ``python -m repro`` goes: ``cli`` -> ``environment`` (import torch safely, pick a
device) -> ``catalogue.select`` (which scenarios) -> ``engine.oracle`` (run each scenario on a
ScriptModule subclass and on its eager twin) -> ``report`` (a status per catalogued bug,
compared with the ``ledger``) -> one of ``formats``.
"""

__version__ = "0.1.0"
