"""Import torch and pick a device without letting a broken backend take the tool down.

torch_npu registers itself as a torch device backend, so with torch_npu installed but
its CANN runtime missing a plain ``import torch`` fails. We therefore switch torch's
backend autoload off and import torch_npu ourselves, where a failure is a status line
in the report instead of a traceback.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import warnings
from dataclasses import dataclass
from types import ModuleType

from repro import ctrl_c

DEVICE_CHOICES = ("auto", "cpu", "cuda", "npu")


class EnvironmentProblem(Exception):
    """A broken or unsuitable environment, said in one sentence (CLI exit code 2)."""


@dataclass(frozen=True)
class Environment:
    """What the run found: the versions that go in every report, and the device used."""

    torch_version: str
    python_version: str
    device: str
    torch_npu: str


def import_torch() -> ModuleType:
    """Import torch with device-backend autoload off; raise EnvironmentProblem if it fails."""
    os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    try:
        with ctrl_c.kept(), warnings.catch_warnings():  # torch swallows a Ctrl-C while numpy loads
            warnings.simplefilter("ignore")  # e.g. "Failed to initialize NumPy"
            import torch
    except Exception as err:  # any failure of a third-party import is an environment fact
        raise EnvironmentProblem(f"torch cannot be imported: {_first_line(err)}") from err
    return torch


def npu_status() -> tuple[bool, str]:
    """Load torch_npu if it is installed; return (usable, a status that reads after "torch_npu ")."""
    try:
        version = importlib.metadata.version("torch_npu")
    except importlib.metadata.PackageNotFoundError:
        return False, "not installed"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import torch_npu  # noqa: F401  (registers the "npu" device with torch)
    except Exception as err:
        return False, f"{version} installed but cannot load ({_first_line(err)})"
    import torch

    npu = torch.npu  # type: ignore[attr-defined]  # torch_npu adds torch.npu at import; torch's stubs lack it
    if not npu.is_available():
        return False, f"{version} loaded, no NPU visible"
    return True, f"{version} loaded, {npu.device_count()} NPU(s)"


def resolve_environment(requested: str) -> Environment:
    """Import torch (and torch_npu when present) and resolve ``--device``."""
    if requested not in DEVICE_CHOICES:
        raise EnvironmentProblem(f"unknown device {requested!r}; choose one of {', '.join(DEVICE_CHOICES)}.")
    torch = import_torch()
    npu_usable, npu_state = npu_status()
    cuda_usable = torch.cuda.is_available()
    if requested == "npu" and not npu_usable:
        raise EnvironmentProblem(f"--device npu was requested but no NPU is usable: torch_npu {npu_state}.")
    if requested == "cuda" and not cuda_usable:
        built = torch.version.cuda or "no CUDA"
        raise EnvironmentProblem(
            f"--device cuda was requested but torch {torch.__version__} (built with {built}) sees no CUDA device."
        )
    if requested == "auto":
        requested = "npu" if npu_usable else "cuda" if cuda_usable else "cpu"
    return Environment(
        torch_version=torch.__version__,
        python_version=platform.python_version(),
        device=requested,
        torch_npu=npu_state,
    )


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__
