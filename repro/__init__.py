"""Prove, explain and track the ScriptModule ``register_full_backward_hook`` bug.

One run of ``python -m repro`` goes: ``cli`` -> ``environment`` (import torch safely,
pick a device) -> ``oracle`` (run each entry of ``scenarios`` on a ScriptModule subclass
and on its eager twin from ``models``) -> ``report`` (outcome, compared with the
``ledger``) -> one of ``formats``.
"""

__version__ = "0.1.0"
