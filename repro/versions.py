"""Versions read from outside, parsed in one place: a release or wheel name on an index, a device
report's ``torch_version``, a ledger's keys and ``fixed_in``, a tag, a ``--published`` answer, the
command line.

``packaging.version.Version`` raises a plain ``ValueError``, not ``InvalidVersion``, for a number past
Python's 4,300-digit limit on ``int`` from text, so a reader that catches ``InvalidVersion`` alone
crashes on one. Here every failure is ``InvalidVersion``, and text longer than any release name is
refused before it is parsed. The limit itself (``sys.set_int_max_str_digits``) stays as it is.
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

MAX_LENGTH = 128  # characters: torch's longest names (2.16.0.dev20261201+cu126) are about 25


def parse(text: object) -> Version:
    """``text`` as a PEP 440 version, or ``InvalidVersion`` saying what it was (cut to 40 characters)."""
    if not isinstance(text, str):
        raise InvalidVersion(f"not a version: {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise InvalidVersion(f"not a version: {text[:40]!r}... ({len(text)} characters)")
    try:
        return Version(text)
    except ValueError:  # InvalidVersion, or the digit limit's plain ValueError
        raise InvalidVersion(f"not a version: {text[:40]!r}") from None


def parsed_or_none(text: object) -> Version | None:
    """``parse``, or None where ``text`` is not a version."""
    try:
        return parse(text)
    except InvalidVersion:
        return None


def ordered(texts: Iterable[str]) -> list[str]:
    """``texts`` oldest release first; a text that is no version sorts before every release."""
    return sorted(texts, key=lambda text: parsed_or_none(text) or Version("0"))
