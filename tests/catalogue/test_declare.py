"""``repro.catalogue.declare``: a bug folder's ``bug.toml`` and ``__init__.py`` make its one ``Bug``, and
a malformed folder is refused in one sentence naming its file."""

from __future__ import annotations

import dataclasses
import importlib
import re
import shutil
import sys
from itertools import count

import pytest

from helpers import ROOT
from repro.catalogue import BUGS

MODEL = "jit_error_replaces_exception"
_names = count()


def folder_copy(tmp_path, monkeypatch, edit=lambda words: words):
    """The model bug's folder as a package of its own, its bug.toml passed through ``edit``; imported."""
    name = f"copied_bug_{next(_names)}"
    shutil.copytree(ROOT / "repro" / "catalogue" / MODEL, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    words = tmp_path / name / "bug.toml"
    words.write_text(edit(words.read_text()))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        return importlib.import_module(name).BUG
    finally:
        sys.modules.pop(name, None)


def test_a_folder_anywhere_declares_the_same_bug(tmp_path, monkeypatch):
    copied, model = folder_copy(tmp_path, monkeypatch), BUGS["jit-error-replaces-exception"]
    for field in dataclasses.fields(model):
        if field.name not in ("recognise", "reach", "root_cause", "fixes", "workaround"):  # functions of the copy
            assert getattr(copied, field.name) == getattr(model, field.name), field.name
    assert copied.workaround and model.workaround and copied.workaround.name == model.workaround.name
    assert copied.fixes.patch.test == model.fixes.patch.test
    assert isinstance(copied.apis, tuple) and isinstance(copied.workaround.tried, tuple)


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda w: 'colour = "red"\n' + w, "unexpected keyword argument 'colour'"),
        (lambda w: 'scope = [["flat", "script_method", ""]]\n' + w, "scope is given both here and as SCOPE"),
        (lambda w: re.sub(r'^edit = ".*"$', 'edit = "nowhere"', w, flags=re.M), "'nowhere' names no function"),
        (lambda w: re.sub(r"^symptom = .*$", "", w, flags=re.M), "missing 1 required keyword-only argument"),
    ],
    ids=["unknown word", "given twice", "edit names nothing", "word missing"],
)
def test_a_malformed_folder_is_refused_naming_its_file(tmp_path, monkeypatch, edit, said):
    with pytest.raises(ValueError, match=r"^copied_bug_\d+/bug\.toml: ") as refused:
        folder_copy(tmp_path, monkeypatch, edit)
    assert said in str(refused.value) and "\n" not in str(refused.value)
