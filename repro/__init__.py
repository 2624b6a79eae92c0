"""Prove, explain and track the ScriptModule ``register_full_backward_hook`` bug and its siblings.

One run of ``python -m repro`` goes: ``cli`` -> ``environment`` (import torch safely, pick a
device) -> ``catalogue.select`` (which scenarios) -> ``engine.oracle`` (run each scenario on a
ScriptModule subclass and on its eager twin) -> ``report`` (a status per catalogued bug,
compared with the ``ledger``) -> one of ``formats``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("scriptmodule-hook-repro")  # setuptools-scm's, from the installed metadata
except PackageNotFoundError:  # a checkout on sys.path that was never installed
    __version__ = "0+unknown"
