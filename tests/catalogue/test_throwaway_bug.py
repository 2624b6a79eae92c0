"""A bug is one folder (issue 44): a throwaway bug folder dropped into a temporary copy of the package is
picked up, with no other edit, by the registry, `--list-bugs`, the bisect entry, the support table, the
docs generator and the catalogue's generic tests."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from helpers import ROOT, run
from tracker.catalogue_docs import PARTS

MODEL = "jit_error_replaces_exception"  # the folder the throwaway one copies, its words renamed
RENAMED = {"id": '"zz-throwaway"', "number": "0", "title": '"a throwaway bug"', "headline": '"thrown away"'}


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    """This checkout's code and docs, plus one bug folder; number 0 puts it first in every list, so that
    it, not the bug it copies, explains the departures the two share."""
    root = tmp_path_factory.mktemp("throwaway")
    for name in ("repro", "tracker", "tests", "docs"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("README.md", "pyproject.toml"):
        shutil.copy(ROOT / name, root / name)
    folder = root / "repro" / "catalogue" / "zz_throwaway"
    shutil.copytree(ROOT / "repro" / "catalogue" / MODEL, folder, ignore=shutil.ignore_patterns("__pycache__"))
    words = folder / "bug.toml"
    text = words.read_text()
    for key, value in RENAMED.items():
        text, count = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, count=1, flags=re.M)
        assert count == 1, key
    words.write_text(text)
    (folder / "downstream.md").write_text("A throwaway workaround.\n\n<!-- proof -->\n")
    return root


def in_copy(copy, *args: str, **kwargs):
    return run(list(args), cwd=copy, env={"PYTHONPATH": str(copy)}, **kwargs)


@pytest.mark.slow  # fresh interpreters that import torch
def test_the_registry_list_bugs_and_bisect_find_the_new_folder(copy):
    listed = in_copy(copy, "-m", "repro", "--list-bugs")
    assert listed.returncode == 0 and listed.stdout.startswith("zz-throwaway: a throwaway bug"), listed.stderr
    assert "bisect: python -m repro.bisect zz-throwaway" in listed.stdout
    bisected = in_copy(copy, "-m", "repro.bisect", "zz-throwaway")
    assert bisected.returncode == 1 and "BUG:" in bisected.stdout + bisected.stderr


@pytest.mark.slow
def test_the_support_table_names_the_new_bug_where_it_departs(copy):
    proc = in_copy(copy, "-m", "repro", "--support-table", "--json", timeout=300)
    cells = " ".join(json.dumps(row) for row in json.loads(proc.stdout)["rows"])
    assert "zz-throwaway" in cells, proc.stderr[-2000:]


@pytest.mark.slow  # fresh interpreters (1 s)
def test_the_docs_generator_adds_the_new_bug_to_every_list(copy):
    check = in_copy(copy, "-m", "tracker.catalogue_docs", "--check", "--root", str(copy))
    stale = {line.split(":")[0] for line in check.stdout.splitlines()}  # ledger.md, tracker.md: the count
    assert check.returncode == 1 and stale == {page for page, _ in PARTS}, check.stdout + check.stderr
    write = in_copy(copy, "-m", "tracker.catalogue_docs", "--root", str(copy))
    assert write.returncode == 0
    for page in ("README.md", "docs/reproducer.md", "docs/filing.md", "docs/downstream.md"):
        assert "`zz-throwaway`" in (copy / page).read_text(), page
    section = (copy / "docs/downstream.md").read_text().split("### `zz-throwaway`")[1].split("### ")[0]
    assert "A throwaway workaround." in section and "Not proven yet: the ledger records no proof" in section
    assert (copy / "pyproject.toml").read_text().count('"repro.catalogue.zz_throwaway",') == 2


@pytest.mark.slow
def test_the_catalogues_generic_tests_cover_the_new_bug(copy):
    proc = in_copy(
        copy,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-n",
        "0",
        "-m",
        "not slow",
        "tests/catalogue/test_catalogue.py",
        "-k",
        "zz-throwaway and (element or static_signature or bisect_script)",
        timeout=300,
    )
    passed = int(proc.stdout.strip().splitlines()[-1].split(" passed")[0].split()[-1])
    assert proc.returncode == 0 and passed >= 9, proc.stdout[-3000:]  # 7 elements, its signature, its script


def _names_of(bug_id: str, prose: bool = True) -> re.Pattern[str]:
    """The bug's folder as a module or path, and with ``prose`` its id as written in text or data."""
    folder = rf"catalogue[./]{bug_id.replace('-', '_')}\b"
    return re.compile(rf"(?<![\w-]){re.escape(bug_id)}(?![\w-])|{folder}" if prose else folder)


# Where a bug may be named outside its folder: the ledger (data), the schema-1 migration and the
# original bug's thin bisect entry, which the project's layout names.
NAMED_ELSEWHERE = {"repro/ledger.json": "any", "repro/ledger.py": "ORIGINAL", "repro/full_backward_hook_bug.py": "any"}


@pytest.mark.slow  # reads every file of the tree once per bug (2 s)
def test_no_code_outside_a_bugs_folder_names_it():
    """Issue 44: a bug is one folder; repro/, tracker/ and tools/ reach it only through the registry. Another
    bug's folder may name it in its prose (what it explains, where a workaround meets it), never as a
    module or path."""
    from repro.catalogue import BUGS

    found = []
    for base in ("repro", "tracker", "tools"):
        for path in sorted((ROOT / base).rglob("*")):
            relative = path.relative_to(ROOT)
            if not path.is_file() or "__pycache__" in relative.parts or path.suffix not in (".py", ".json", ".md"):
                continue
            folder = (
                relative.parts[2] if relative.parts[:2] == ("repro", "catalogue") and len(relative.parts) > 3 else ""
            )
            text = path.read_text(encoding="utf-8")
            for bug_id in BUGS:
                names = _names_of(bug_id, prose=not folder)
                if folder == bug_id.replace("-", "_") or not names.search(text):  # a file naming no bug: one search
                    continue
                for number, line in enumerate(text.splitlines(), 1):
                    allowed = NAMED_ELSEWHERE.get(str(relative))
                    if names.search(line) and allowed != "any" and not (allowed and allowed in line):
                        found.append(f"{relative}:{number}: {bug_id}")
    assert found == []


def test_the_check_above_sees_a_bug_named_in_prose_and_as_a_module():
    assert _names_of("checkpoint-early-stop").search("see checkpoint-early-stop's patch")
    assert _names_of("checkpoint-early-stop", prose=False).search(
        "from repro.catalogue.checkpoint_early_stop import BUG"
    )
    assert not _names_of("checkpoint-early-stop", prose=False).search("see checkpoint-early-stop's patch")
    assert not _names_of("checkpoint-early-stop").search("torch.utils.checkpoint.set_checkpoint_early_stop")
