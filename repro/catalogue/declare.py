"""A bug's folder read into its one ``Bug``: ``bug.toml`` holds the words, ``__init__.py`` the code.

The words are what people write and read: titles, the symptom, the measured departures, the
workaround's and the upstream patch's texts. The code is what runs: the recogniser, the scope (built
from the shape groups of ``repro.catalogue.bug``), the root cause's measurement, the static
signature, the patch's edit and the workaround's switch. ``__init__.py`` ends in
``BUG = declare(__name__)``, and its code reaches the ``Bug`` by these names:

- ``recognise`` and ``reach`` (required), ``root_cause``, ``applies``: functions;
- ``SCOPE`` (required), ``PIECES``, ``FINGERPRINTED``, ``CASES``, ``NEEDS``, ``ERRORS``: values;
- ``REFUSAL``: the loud patch's refusal, where the patch's code also writes it;
- ``CANDIDATES``: the candidate fixes other than the upstream patch;
- ``[patch] edit`` and ``[workaround] apply`` in ``bug.toml`` name a function of the module (or, for
  ``apply``, a switch ``repro.catalogue.bug`` shares: ``unchanged``, ``global_backward_hooks_allowed``).

A value given both ways, a word ``Bug`` does not know, or a missing one is refused with the file's
name: every generic test imports the catalogue, so a malformed folder fails all of them at once.
"""

from __future__ import annotations

import sys
from importlib import resources
from typing import Any

from repro.catalogue import bug as shared
from repro.catalogue.bug import Bug, Departure, Workaround
from repro.catalogue.fixes import Fixes, UpstreamPatch, regression_test
from repro.catalogue.texts import rendered

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, before it joined the standard library
    import tomli as tomllib

WORDS = "bug.toml"
CODE = {  # Bug's field -> the module's name for it
    "recognise": "recognise",
    "root_cause": "root_cause",
    "applies": "applies",
    "scope": "SCOPE",
    "reach": "reach",
    "pieces": "PIECES",
    "fingerprinted": "FINGERPRINTED",
    "cases": "CASES",
    "needs": "NEEDS",
    "errors": "ERRORS",
}
TUPLES = ("apis", "cases", "needs", "errors")  # Bug's fields that bug.toml writes as arrays


def declare(package: str) -> Bug:
    """The ``Bug`` of the folder ``package`` (called by its ``__init__.py``, as its last line)."""
    module = sys.modules[package]
    words = tomllib.loads(resources.files(package).joinpath(WORDS).read_text(encoding="utf-8"))
    try:
        return _bug(package, module.__doc__ or "", words, vars(module))
    except (KeyError, TypeError, ValueError) as err:
        where = f"{package.replace('.', '/')}/{WORDS}"
        raise ValueError(f"{where}: {err}") from None


def _bug(package: str, doc: str, words: dict[str, Any], code: dict[str, Any]) -> Bug:
    fields: dict[str, Any] = {name: tuple(value) if name in TUPLES else value for name, value in words.items()}
    for name, attribute in CODE.items():
        if attribute in code:
            if name in fields:
                raise ValueError(f"{name} is given both here and as {attribute} in __init__.py")
            fields[name] = code[attribute]
    fields["departures"] = tuple(Departure(**departure) for departure in fields["departures"])
    fields["workaround"] = _workaround(fields["workaround"], code)
    fields["fixes"] = Fixes(_patch(package, fields.pop("patch"), code), tuple(code.get("CANDIDATES", ())))
    return Bug(**fields, paste=rendered(package, "paste.py"), explanation=doc)


def _named(code: dict[str, Any], name: str) -> Any:
    """The function ``name`` of the bug's module, or one of the switches bugs share (``bug.unchanged``)."""
    found = code.get(name, getattr(shared, name, None))
    if not callable(found):
        raise ValueError(f"{name!r} names no function of __init__.py or repro.catalogue.bug")
    return found


def _workaround(words: dict[str, Any], code: dict[str, Any]) -> Workaround:
    apply = _named(code, words.pop("apply")) if "apply" in words else None
    tried, limits = tuple(words.pop("tried", ())), tuple(tuple(pair) for pair in words.pop("limits", ()))
    switches = tuple(words.pop("switches", ()))
    return Workaround(**words, apply=apply, tried=tried, limits=limits, switches=switches)


def _patch(package: str, words: dict[str, Any], code: dict[str, Any]) -> UpstreamPatch:
    if "REFUSAL" in code:
        if "refusal" in words:
            raise ValueError("the patch's refusal is given both here and as REFUSAL in __init__.py")
        words["refusal"] = code["REFUSAL"]
    files, edit, test = tuple(words.pop("files")), _named(code, words.pop("edit")), words.pop("test")
    return UpstreamPatch(**words, files=files, edit=edit, test=regression_test(package, test.pop("path"), **test))
