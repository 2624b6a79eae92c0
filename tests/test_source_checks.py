"""``repro.source_checks.parse_python``: the one way this project parses Python, safe across threads."""

from __future__ import annotations

import ast
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from repro.source_checks import parse_python

TEXT = (Path(torch.__file__).parent / "nn" / "modules" / "module.py").read_text(encoding="utf-8")


class _Finalized:
    """Garbage in a cycle whose finalizer gives up the GIL: the collector runs it mid-parse, from
    inside the AST constructor, and another thread's parse starts there."""

    def __del__(self) -> None:
        time.sleep(0)


def _system_errors(parse: Callable[[str], ast.Module], threads: int = 4, rounds: int = 3) -> list[str]:
    errors: list[str] = []

    def work() -> None:
        for _ in range(rounds):
            for _ in range(200):
                garbage = _Finalized()
                garbage.cycle = garbage  # type: ignore[attr-defined]
            try:
                parse(TEXT)
            except SystemError as err:
                errors.append(str(err))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        workers = [threading.Thread(target=work) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        sys.setswitchinterval(interval)
    return errors


@pytest.mark.slow
def test_threads_parsing_at_once_never_meet_the_ast_constructor_race():
    bare = _system_errors(ast.parse)
    if not bare:
        pytest.skip(f"bare ast.parse does not race on Python {sys.version.split()[0]} under this load")
    assert _system_errors(parse_python) == [], f"bare ast.parse raised: {bare[0]}"


def test_parse_python_parses_and_refuses_as_ast_parse_does():
    assert ast.dump(parse_python("x = 1\n")) == ast.dump(ast.parse("x = 1\n"))
    with pytest.raises(SyntaxError):
        parse_python("def (:\n")
