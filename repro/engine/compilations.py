"""Count what TorchScript compiles: the cost a scenario run adds, watched by the benchmark and a test.

TorchScript compiles a class's methods once, the first time it meets the class's concrete type
(``torch.jit._recursive.create_methods_and_properties_from_stubs``), and builds a C++ module for
every instance (``create_script_module``). Both are counted while ``counted()`` is in force.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass
class Count:
    classes: int = 0  # classes whose methods TorchScript compiled
    instances: int = 0  # ScriptModules built (each instance, each scripted child)


@contextmanager
def counted() -> Iterator[Count]:
    """Count compilations in this process until the block ends."""
    import torch.jit._recursive as recursive

    count = Count()
    compile_methods, create = recursive.create_methods_and_properties_from_stubs, recursive.create_script_module

    def compiling(*args: Any, **kwargs: Any) -> Any:
        count.classes += 1
        return compile_methods(*args, **kwargs)

    def creating(*args: Any, **kwargs: Any) -> Any:
        count.instances += 1
        return create(*args, **kwargs)

    recursive.create_methods_and_properties_from_stubs, recursive.create_script_module = compiling, creating
    try:
        yield count
    finally:
        recursive.create_methods_and_properties_from_stubs, recursive.create_script_module = compile_methods, create
