"""The pytest plugin against misuse and a missing torch (issue 20): a test tied to more than one bug is
refused at collection, naming it; without torch, tied tests skip instead of erroring at setup."""

from __future__ import annotations

import textwrap

import pytest

from helpers import run

FLAG, ROOT_ONLY = "full-backward-hook-flag", "global-hooks-root-only"
HEAD = "import pytest\nfrom repro.expect import known_upstream_bug\n\n"
TIED_TWICE = {  # how a test ends up with two ties -> its node id
    "stacked": (
        f'@pytest.mark.upstream_bug("{FLAG}")\n@pytest.mark.upstream_bug("{ROOT_ONLY}")\n'
        "def test_x():\n    raise RuntimeError\n",
        "test_tied.py::test_x",
    ),
    "module-and-function": (
        f'pytestmark = pytest.mark.upstream_bug("{ROOT_ONLY}")\n\n\n'
        f'@pytest.mark.upstream_bug("{FLAG}")\ndef test_x():\n    raise RuntimeError\n',
        "test_tied.py::test_x",
    ),
    "class-and-method": (
        f'@pytest.mark.upstream_bug("{ROOT_ONLY}")\nclass TestX:\n'
        f'    @pytest.mark.upstream_bug("{FLAG}")\n'
        "    def test_x(self):\n        raise RuntimeError\n",
        "test_tied.py::TestX::test_x",
    ),
    "marker-and-decorator": (
        f'@pytest.mark.upstream_bug("{FLAG}")\n@known_upstream_bug("{ROOT_ONLY}")\n'
        "def test_x():\n    raise RuntimeError\n",
        "test_tied.py::test_x",
    ),
    "same-bug-twice": (
        f'@pytest.mark.upstream_bug("{FLAG}")\n@pytest.mark.upstream_bug("{FLAG}")\n'
        "def test_x():\n    raise RuntimeError\n",
        "test_tied.py::test_x",
    ),
}
SOLO = f'\n\n@pytest.mark.upstream_bug("{FLAG}")\ndef test_alone():\n    pass\n'


def pytest_in(tmp_path, source: str, *args: str, env: dict[str, str] | None = None):
    (tmp_path / "test_tied.py").write_text(source)
    return run(["-m", "pytest", "-p", "no:cacheprovider", "-rs", *args, "test_tied.py"], cwd=tmp_path, env=env)


@pytest.mark.slow  # a nested pytest that imports torch
@pytest.mark.parametrize("case", TIED_TWICE, ids=TIED_TWICE.keys())
def test_a_test_tied_to_two_bugs_is_refused_at_collection_naming_it(tmp_path, case):
    source, nodeid = TIED_TWICE[case]
    proc = pytest_in(tmp_path, HEAD + source + SOLO, "--collect-only", "-q")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "1 error" in out and "Traceback" not in out, out
    said = [line for line in out.splitlines() if "tied to more than one catalogued bug" in line]
    assert said and said[0].startswith(f"{nodeid}: tied to more than one catalogued bug ("), out
    assert FLAG in said[0] and (ROOT_ONLY in said[0] or case == "same-bug-twice")


NO_TORCH = textwrap.dedent("""\
    import importlib.metadata, sys

    _version = importlib.metadata.version


    def version(name):
        if name == "torch":
            raise importlib.metadata.PackageNotFoundError(name)
        return _version(name)


    class _NoTorch:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "torch":
                raise ModuleNotFoundError(f"No module named {name!r}")


    importlib.metadata.version = version
    sys.meta_path.insert(0, _NoTorch())
    """)


@pytest.mark.slow  # a nested pytest run (over a second)
def test_without_torch_tied_tests_skip_saying_so(tmp_path):
    (tmp_path / "hide").mkdir()
    (tmp_path / "hide" / "sitecustomize.py").write_text(NO_TORCH)
    source = HEAD + (
        f'@pytest.mark.upstream_bug("{FLAG}")\ndef test_marked():\n    raise RuntimeError\n\n\n'
        f'@known_upstream_bug("{FLAG}")\ndef test_decorated():\n    raise RuntimeError\n\n\n'
        "def test_untied():\n    pass\n"
    )
    proc = pytest_in(tmp_path, source, env={"PYTHONPATH": str(tmp_path / "hide")})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "1 passed, 2 skipped" in out, out
    assert "upstream bugs: torch is not installed" in out
    skipped = [line for line in out.splitlines() if line.startswith("SKIPPED [2] ")]
    assert skipped and skipped[0].endswith(": torch is not installed")
    assert "PackageNotFoundError" not in out.replace("(PackageNotFoundError)", "") and "ERROR" not in out
