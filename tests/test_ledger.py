"""The ledger: expectations derived from it, and writes that survive crashes and concurrency."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import A_BUG, file_size_limit, first_quick, read_only
from repro.ledger import ORIGINAL, LedgerError, check_writable, expectation_for, load, new_ledger, update


@pytest.mark.parametrize(
    ("fixed_in", "torch_version", "outcome"),
    [
        (None, "2.13.0+cpu", "present"),
        ("2.13.0", "2.13.0+cpu", "fixed"),  # a local build of the fixed release
        ("2.13.0", "2.14.1", "fixed"),
        ("2.14.0", "2.13.0", "present"),
        ("2.14.0", "2.14.0.dev20260101+cpu", "present"),  # a nightly before the release
    ],
)
def test_expectation_from_fixed_in(fixed_in, torch_version, outcome):
    ledger = {"bugs": {A_BUG: {"fixed_in": fixed_in}}, "releases": {}}
    assert expectation_for(ledger, torch_version, A_BUG).outcome == outcome


def test_confirmed_result_for_the_release_wins_over_fixed_in():
    ledger = {
        "bugs": {A_BUG: {"fixed_in": "2.10.0"}},
        "releases": {"2.13.0": {"bugs": {A_BUG: {"dynamic": {"verdict": "present"}}}}},
    }
    expectation = expectation_for(ledger, "2.13.0+cpu", A_BUG)
    assert expectation.outcome == "present" and "2.13.0" in expectation.reason


def test_committed_ledger_is_valid():
    from repro.ledger import DEFAULT_PATH

    data = load(DEFAULT_PATH)
    assert data["schema"] == 3 and A_BUG in data["bugs"] and isinstance(data["releases"], dict)


def test_failed_change_leaves_the_ledger_untouched(tmp_path):
    path = tmp_path / "ledger.json"
    update(path, lambda d: d["releases"].update({"1.0.0": {"static": None}}))
    before = path.read_bytes()

    def crash(data):
        data["releases"].clear()
        raise RuntimeError("crash mid-run")

    with pytest.raises(RuntimeError):
        update(path, crash)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


def _add_release(args):
    path, version = args
    update(path, lambda d: d["releases"].__setitem__(version, {"static": {"verdict": "present"}}))


def test_concurrent_writers_lose_no_entry(tmp_path):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(new_ledger()))
    versions = [f"2.{i}.0" for i in range(24)]
    with multiprocessing.get_context("fork").Pool(4) as pool:  # separate processes, each with its lock
        pool.map(_add_release, [(path, v) for v in versions])
    assert sorted(load(path)["releases"]) == sorted(versions)


def test_malformed_ledger_is_a_ledger_error(tmp_path):
    path = tmp_path / "ledger.json"
    path.write_text('{"schema": 1, "releases": []}')
    with pytest.raises(LedgerError, match="no 'releases' object"):
        load(path)


SCHEMA_1 = Path(__file__).with_name("data") / "ledger-schema1.json"  # the committed ledger before schema 2


def test_schema_1_ledger_is_migrated_on_read():
    old = json.loads(SCHEMA_1.read_text())
    data = load(SCHEMA_1)
    assert old["schema"] == 1 and data["schema"] == 3 and set(data["releases"]) == set(old["releases"])
    assert data["bugs"] == {ORIGINAL: {"fixed_in": None, "regressions": []}}
    release = data["releases"]["2.13.0"]
    assert release["probe"]["wheel"] == old["releases"]["2.13.0"]["static"]["wheel"]
    assert release["bugs"][ORIGINAL]["static"]["evidence"] == old["releases"]["2.13.0"]["static"]["evidence"]
    assert release["bugs"][ORIGINAL]["dynamic"] == old["releases"]["2.13.0"]["dynamic"]
    assert expectation_for(data, "2.13.0+cpu", ORIGINAL).reason == "the ledger's confirmed result for 2.13.0"


def test_schema_1_ledger_is_written_back_only_as_schema_3(tmp_path):
    path = tmp_path / "ledger.json"
    path.write_bytes(SCHEMA_1.read_bytes())
    update(path, lambda data: None)
    written = json.loads(path.read_text())
    assert written["schema"] == 3 and "fixed_in" not in written and written["bugs"][ORIGINAL]["fixed_in"] is None


def test_schema_2_support_text_is_kept_as_legacy_never_shown_as_measured_nor_lost(tmp_path):
    path = tmp_path / "ledger.json"
    cells = {"setattr": "works; raises: attribute-assignment-forwarded (a parameter to None)"}
    path.write_text(json.dumps({"schema": 2, "bugs": {}, "releases": {"2.13.0": {"support": cells}}}))
    release = load(path)["releases"]["2.13.0"]
    assert "support" not in release and release["support_legacy"] == cells
    update(path, lambda data: None)
    written = json.loads(path.read_text())
    assert written["schema"] == 3 and written["releases"]["2.13.0"]["support_legacy"] == cells


@pytest.mark.parametrize(
    "column",
    [
        {
            "python": "3.11.7",
            "platform": "linux-x86_64",
            "rows": {"setattr": {"codes": ["Not A Code"], "cell": "works"}},
        },
        {"python": "3.11.7", "platform": "linux-x86_64", "rows": {"setattr": {"codes": [], "cell": "works"}}},
        {"python": "3.11.7", "platform": "linux-x86_64", "rows": {"setattr": {"codes": ["ok"], "cell": 1}}},
        {"python": "3.11.7", "rows": {"setattr": {"codes": ["ok"], "cell": "works"}}},
        {"python": "3.11.7", "platform": "x", "rows": {"a": {"codes": ["ok"], "cell": "", "left_out": -1}}},
    ],
    ids=["unknown-code", "no-code", "cell-not-text", "no-platform", "negative-left-out"],
)
def test_a_support_column_that_is_not_codes_and_cells_is_refused_in_one_sentence(tmp_path, column):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps({"schema": 3, "bugs": {}, "releases": {"2.13.0": {"support": {"cpu": column}}}}))
    with pytest.raises(LedgerError, match="a support table in 2.13.0 that is not one column per device"):
        load(path)


EXPLORED = {
    "seed": 0,
    "budget_s": 60.0,
    "cases": 700,
    "replayed": 3,
    "seconds": 36.2,
    "departures": {"a catalogued bug": 40, "unexplained": 1},
    "bugs": ["copy-shares-training"],
    "unexplained": ["silent at m = copy.copy(m): the copy's children of another class"],
    "apis": {"forward": 700, "copy.copy": 80},
    "checked_at": "2026-12-06T04:00:00+00:00",
}
TRIED = {"workaround": "repro.workaround.deepcopy", "verdict": "holds", "space": "9 generated models", "cases": 9}


def _with(record, **changed):
    return {**record, **changed}


def test_an_explorer_record_and_a_workaround_on_generated_models_are_kept(tmp_path):
    path = tmp_path / "ledger.json"
    release = {"explore": {"cpu": EXPLORED}, "bugs": {"copy-shares-training": {"explored": TRIED}}}
    path.write_text(json.dumps({"schema": 3, "bugs": {}, "releases": {"2.13.0": release}}))
    assert load(path)["releases"]["2.13.0"] == release


@pytest.mark.parametrize(
    "record",
    [
        _with(EXPLORED, replayed=701),  # more replayed than ran
        _with(EXPLORED, cases=-1),
        _with(EXPLORED, cases=True),
        _with(EXPLORED, seconds=-1.5),
        _with(EXPLORED, bugs=["Not An Id"]),
        _with(EXPLORED, unexplained=["x" * 501]),
        _with(EXPLORED, unexplained=["x"] * 21),
        _with(EXPLORED, apis={"forward": "many"}),
        _with(EXPLORED, extra=1),
        {k: v for k, v in EXPLORED.items() if k != "apis"},
    ],
    ids=["replayed", "negative", "flag", "seconds", "bug-id", "long", "too-many", "count-text", "extra", "no-apis"],
)
def test_an_explorer_record_that_is_not_one_is_refused_in_one_sentence(tmp_path, record):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps({"schema": 3, "bugs": {}, "releases": {"2.13.0": {"explore": {"cpu": record}}}}))
    with pytest.raises(LedgerError, match="an explorer record in 2.13.0 that is not one per device"):
        load(path)


@pytest.mark.parametrize(
    "record",
    [_with(TRIED, verdict=""), _with(TRIED, verdict="works"), _with(TRIED, cases=0), _with(TRIED, space=3)],
    ids=["no-verdict", "unknown-verdict", "no-case", "space-not-text"],
)
def test_a_workaround_record_on_generated_models_that_is_not_one_is_refused(tmp_path, record):
    path = tmp_path / "ledger.json"
    release = {"bugs": {"copy-shares-training": {"explored": record}}}
    path.write_text(json.dumps({"schema": 3, "bugs": {}, "releases": {"2.13.0": release}}))
    with pytest.raises(LedgerError, match="on generated models for copy-shares-training in 2.13.0"):
        load(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"schema": 99, "bugs": {}, "releases": {}}', "has schema 99"),
        ('{"schema": "banana", "releases": {}}', "has schema 'banana'"),
        ('{"bugs": {}, "releases": {}}', "has no schema number"),
        ('{"schema": 1, "releases": {"2.13.0": "present"}}', "no 'releases' object of release objects"),
        ('{"schema": 2, "bugs": {}, "releases": {"not-a-version": {}}}', "release key 'not-a-version'"),
        ('{"schema": 2, "bugs": {"x": {"fixed_in": 2.1}}, "releases": {}}', "invalid fixed_in 2.1"),
        ('{"schema": 2, "bugs": {}, "releases": {"2.1.0": {"bugs": {"x": {"dynamic": "present"}}}}}', "not objects"),
        ('{"schema": 2, "bugs": {}, "releases": {}, "upstream_issues": []}', "'upstream_issues' that is not"),
        ("[" * 200_000 + "]" * 200_000, "nested too deeply"),
        # keys and spellings the code would never write, and so never read: silently ignored otherwise
        ('{"schema": 2, "bugs": {}, "releases": {"2.13.0+cpu": {}}}', "'2.13.0+cpu' that is not in its normal form"),
        ('{"schema": 2, "bugs": {}, "releases": {"2.13": {}}}', "'2.13' that is not in its normal form '2.13.0'"),
        (
            '{"schema": 2, "bugs": {}, "releases": {"2.13.0": {"bugs": {"x": {"dynamic": {"verdict": "Fixed"}}}}}}',
            "a dynamic verdict 'Fixed' for x in 2.13.0",
        ),
        (
            '{"schema": 2, "bugs": {}, "releases": {"2.13.0": {"bugs": {"x": {"static": {"verdict": 1}}}}}}',
            "a static verdict 1 for x in 2.13.0",
        ),
    ],
    ids=[
        "schema-99",
        "schema-banana",
        "schema-none",
        "release-string",
        "key-not-version",
        "fixed-in-number",
        "dynamic-string",
        "issues-list",
        "deep",
        "key-local-version",
        "key-short",
        "verdict-capitalised",
        "static-verdict-number",
    ],
)
def test_malformed_ledgers_are_one_sentence(tmp_path, text, message):
    path = tmp_path / "ledger.json"
    path.write_text(text)
    with pytest.raises(LedgerError, match=re.escape(message)):
        load(path)


def test_a_device_or_fifo_is_not_read(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (Path("/dev/zero"), fifo):  # reading either would hang or exhaust memory
        with pytest.raises(LedgerError, match="is not a regular file"):
            load(path)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mode", [0o644, 0o664, 0o600])
def test_a_write_keeps_the_file_mode(tmp_path, mode):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(new_ledger()))
    path.chmod(mode)
    update(path, lambda d: d["releases"].update({"2.13.0": {}}))
    assert _mode(path) == mode and "2.13.0" in load(path)["releases"]


def test_a_new_ledger_gets_the_mode_of_any_new_file(tmp_path):
    umask = os.umask(0o022)
    try:
        update(tmp_path / "ledger.json", lambda d: None)
    finally:
        os.umask(umask)
    assert _mode(tmp_path / "ledger.json") == 0o644  # not mkstemp's 0600


def test_a_symlinked_ledger_is_written_through_the_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "ledger.json"
    target.write_text(json.dumps(new_ledger()))
    target.chmod(0o640)
    link = tmp_path / "ledger.json"
    link.symlink_to(target)
    update(link, lambda d: d["releases"].update({"2.13.0": {}}))
    assert link.is_symlink() and link.resolve() == target and _mode(target) == 0o640
    assert "2.13.0" in load(target)["releases"]
    assert (tmp_path / "real" / "ledger.json.lock").exists()  # the target is locked: one lock for every path to it


def test_a_killed_writers_temporary_files_are_removed_by_the_next_write(tmp_path):
    """kill -9 between mkstemp and the rename leaves ``.ledger.json.repro-write-XXXXXXXX``; the next writer
    holds the exclusive lock, so any such file is a dead writer's."""
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(new_ledger()))
    stale = [tmp_path / ".ledger.json.repro-write-k1ll3d_9", tmp_path / ".ledger.json.repro-write-abcdefgh"]
    others = [tmp_path / "ledger.json.notes.tmp", tmp_path / ".other.json.repro-write-abcdefgh"]
    for leftover in stale + others:
        leftover.write_text('{"half": ')
    update(path, lambda d: None)
    assert [p for p in stale if p.exists()] == []
    assert [p.name for p in others if not p.exists()] == []


def test_a_users_own_file_that_looks_temporary_is_never_removed(tmp_path):
    """The old writer globbed ``ledger.json.????????.tmp`` and deleted a user's ``ledger.json.backup01.tmp``."""
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(new_ledger()))
    mine = [tmp_path / "ledger.json.backup01.tmp", tmp_path / "ledger.json.abcdefgh.tmp"]
    for file in mine:
        file.write_text("my notes")
    update(path, lambda d: d["releases"].update({"2.13.0": {}}))
    assert [file.read_text() for file in mine] == ["my notes", "my notes"]
    assert [p.name for p in tmp_path.iterdir() if "repro-write" in p.name] == []


def test_a_write_that_fails_leaves_the_old_ledger_whole(tmp_path):
    """A disk that fills mid-write (a file-size limit, as the kernel enforces it) is one sentence, the old
    ledger intact and no temporary file left."""
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(new_ledger()))
    before = path.read_bytes()
    big = {f"9.{n}.0": {"error": "x" * 400} for n in range(50)}
    with file_size_limit(len(before) + 1000), pytest.raises(LedgerError, match="was not written.*stays as it was"):
        update(path, lambda d: d["releases"].update(big))
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name != "ledger.json.lock"] == ["ledger.json"]


def test_a_missing_or_read_only_place_is_refused_before_any_write(tmp_path):
    check_writable(tmp_path / "new.json")  # a new ledger in a writable directory is fine
    with pytest.raises(LedgerError, match="its directory .*missing.* does not exist"):
        check_writable(tmp_path / "missing" / "ledger.json")
    dangling = tmp_path / "link.json"
    dangling.symlink_to(tmp_path / "gone" / "ledger.json")
    with pytest.raises(LedgerError, match="its directory .*gone does not exist"):
        check_writable(dangling)


@pytest.mark.parametrize("what", ["directory", "file"])
def test_a_read_only_ledger_or_directory_is_refused(tmp_path, what):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(new_ledger()))
    says = f"its directory {tmp_path} is read-only" if what == "directory" else "the file is read-only"
    with read_only(tmp_path if what == "directory" else path), pytest.raises(LedgerError, match=re.escape(says)):
        check_writable(path)


def test_a_support_cell_keeps_up_to_what_the_reader_accepts_and_other_text_is_capped(tmp_path):
    path = tmp_path / "ledger.json"
    column = {
        "python": "3.11.7",
        "platform": "linux-x86_64",
        "rows": {"setattr": {"codes": ["ok"], "cell": "w" * 1500}},
    }
    update(path, lambda data: data["releases"].update({"2.13.0": {"support": {"cpu": column}, "error": "e" * 1500}}))
    release = load(path)["releases"]["2.13.0"]
    assert release["support"]["cpu"]["rows"]["setattr"]["cell"] == "w" * 1500
    assert len(release["error"]) == 500 and release["error"].endswith("…[cut]")


def _a_dead_process() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_writer_without_a_lock_removes_only_what_dead_writers_left(tmp_path):
    """A killed ``support_doc`` left ``.support-table.md.repro-write-...`` in docs/ for ever: only the
    ledger's (locked) writer cleaned up. Every writer now removes the files of writers whose process is
    gone, and never a running one's, nor an old name that says no process."""
    from repro import atomic

    page = tmp_path / "support-table.md"
    page.write_text("the page")
    dead = tmp_path / f".support-table.md.repro-write-{_a_dead_process()}-k1ll3d_9"
    running = [
        tmp_path / f".support-table.md.repro-write-{os.getpid()}-abcdefgh",  # this very process
        tmp_path / f".support-table.md.repro-write-{os.getppid()}-abcdefgh",  # another that runs
        tmp_path / ".support-table.md.repro-write-abcdefgh",  # before process ids: owner unknown
        tmp_path / "support-table.md.backup01.tmp",
    ]
    for leftover in [dead, *running]:
        leftover.write_text("half a page")
    atomic.replace(page, "the new page")
    assert page.read_text() == "the new page" and not dead.exists()
    assert [p.name for p in running if not p.exists()] == []


@pytest.mark.parametrize("where", first_quick(["lock-folder", "proc", "sys"]))
def test_a_ledger_that_cannot_be_written_is_refused_before_any_work(tmp_path, where):
    """Issue 46: os.access passes /proc and /sys for root, and a leftover ledger.json.lock folder; the
    check makes a temporary file there and looks at the lock, so each is one sentence at start, not a
    traceback after the work."""
    path = {
        "lock-folder": tmp_path / "ledger.json",
        "proc": Path("/proc/ledger.json"),
        "sys": Path("/sys/ledger.json"),
    }[where]
    if where == "lock-folder":
        path.write_text(json.dumps(new_ledger()))
        (tmp_path / "ledger.json.lock").mkdir()
    elif not path.parent.is_dir():
        pytest.skip(f"no {path.parent} here")
    with pytest.raises(LedgerError, match=r"^the ledger .* cannot be written: "):
        check_writable(path)
    proc = subprocess.run(
        [sys.executable, "-m", "tracker.check_upstream", "--ledger", str(path), "--init", "--since", "9.0"],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "cannot be written" in proc.stderr
