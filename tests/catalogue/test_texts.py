"""The texts upstream and users get are a bug folder's files with the shared models inlined
(repro/catalogue/texts.py): self-contained, and the same code the files hold."""

from __future__ import annotations

import ast

import pytest

from repro.catalogue import BUGS
from repro.catalogue.texts import inserted, rendered


def _texts():
    for bug in BUGS.values():
        yield pytest.param(bug.paste, id=f"{bug.id}-paste")
        yield pytest.param(bug.fixes.patch.test.text, id=f"{bug.id}-regression-test")


@pytest.mark.parametrize("text", _texts())
def test_each_text_stands_alone(text):
    tree = ast.parse(text)
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not any(name.startswith("repro") for name in imported)
    defined = {node.name for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))}
    bases = {ast.unparse(base) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for base in node.bases}
    assert {base for base in bases if "." not in base} <= defined | {"TestCase", "Exception"}
    assert "import torch\n" in text


@pytest.fixture
def package(tmp_path, monkeypatch, request):
    """A package of its own per test: importlib caches a package by its name."""
    folder = tmp_path / f"zz_texts_{request.node.name.removeprefix('test_')[:40]}"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    return folder


def test_a_piece_replaces_its_import_and_brings_the_imports_it_needs(package):
    (package / "paste.py").write_text(
        "import copy\n\nfrom repro.catalogue.pieces import Net, PlainForward\n\nmodel = copy.copy(Net())\n"
    )
    text = rendered(package.name, "paste.py")
    assert text.startswith("import copy\n\nimport torch\n\n\nclass Net(torch.jit.ScriptModule):\n")
    assert "\n\n\nclass PlainForward(torch.jit.ScriptModule):" in text
    assert text.endswith("        return self.linear(x)\n\n\nmodel = copy.copy(Net())\n")
    assert "repro" not in text


def test_a_file_importing_torch_itself_gets_it_once(package):
    (package / "paste.py").write_text("import torch\n\nfrom repro.catalogue.pieces import Net\n\nNet()\n")
    text = rendered(package.name, "paste.py")
    assert text.count("import torch") == 1 and text.startswith("import torch\n\n\nclass Net(")


def test_a_file_without_pieces_is_its_own_text(package):
    (package / "paste.py").write_text("import torch\n\nprint(torch.ones(1))\n")
    assert rendered(package.name, "paste.py") == "import torch\n\nprint(torch.ones(1))\n"


def test_an_inserted_function_gives_its_body_and_a_method_or_class_its_whole_definition(package):
    (package / "inserted.py").write_text(
        '"""Lines for torch."""\n\nimport torch\n\n\n'
        "def guard(model):\n"
        "    # why, kept\n"
        "    if isinstance(model, torch.jit.ScriptModule):\n"
        '        raise RuntimeError("no")\n\n\n'
        "class ScriptModule(torch.nn.Module):\n"
        "    @staticmethod\n"
        "    def compile(*args):\n"
        "        raise RuntimeError(args)\n"
    )
    assert inserted(package.name, "guard") == (
        "# why, kept",
        "if isinstance(model, torch.jit.ScriptModule):",
        '    raise RuntimeError("no")',
    )
    assert inserted(package.name, "ScriptModule.compile") == (
        "@staticmethod",
        "def compile(*args):",
        "    raise RuntimeError(args)",
    )
    assert inserted(package.name, "ScriptModule")[0] == "class ScriptModule(torch.nn.Module):"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("def guard(x):\n    return x\n", "defines no missing"),
        ("def missing(\n    x,\n):\n    return x\n", "signature is not on one line"),
    ],
    ids=["unknown", "long signature"],
)
def test_fragment_unread(package, text, problem):
    """A fragment ``inserted`` cannot read is one sentence naming the package and the file."""
    (package / "inserted.py").write_text(text)
    with pytest.raises(ValueError, match=problem):
        inserted(package.name, "missing")
