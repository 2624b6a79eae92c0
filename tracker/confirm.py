"""Dynamic confirmation: install one torch in a throwaway environment and run the reproducer there.

uv is used when present, else ``venv --without-pip`` filled by this interpreter's pip
(``pip --python``, pip 22.3 or newer). The project is put on ``PYTHONPATH``
rather than installed, so only torch and its dependencies are downloaded. The environment
is removed afterwards, whatever happened.

Trust: the installed torch's code runs on this machine, at import in the reproducer. So the
installer and the reproducer get an allow-listed environment, never this process's (no tokens);
torch comes only from ``Installer.index_url``, and nothing from pip's or uv's configuration files,
find-links or ``PIP_*``/``UV_*`` variables unless ``Installer.use_pip_config`` (which means pip).
An ``extra_index_url`` serves torch's dependencies only: torch is installed first, without them,
from the index alone; a dependency may then come from either index (the dependency-confusion
risk of any extra index, taken only when one is given).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from repro import ledger as ledger_io
from repro.catalogue import BUGS
from repro.ledger import OUTCOMES, PROOF_KEYS, STATUSES  # a report's outcome; a bug's status (not "skipped")
from repro.requirements import EXPLORING, NEEDED

PROJECT = Path(__file__).resolve().parents[1]
EXPLORE_SLACK = 120.0  # seconds an exploration may take past its budget: its workers start, its last case ends
RUN_ENV = ("PATH", "HOME", "TMPDIR", "LANG", "LANGUAGE")  # and LC_*: what the reproducer is given
INSTALL_ENV = RUN_ENV + (  # and what an installer needs to reach an index (proxies in either case)
    "PIP_CERT",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
)


@dataclass(frozen=True)
class Dynamic:
    verdict: str  # one of STATUSES
    detail: str


@dataclass(frozen=True)
class Measurement:
    """What one dynamic run measured: a verdict per bug, the support table's column for its device
    (``{device: {"python", "platform", "rows": {api: {"codes", "cell", "left_out"}}}}``; empty where the
    reproducer made none), what proving each bug's workaround there found, and where the explorer ran
    (``Exploring``), its record and each workaround's verdict on generated models."""

    verdicts: dict[str, Dynamic]
    support: dict[str, Any]
    workarounds: dict[str, dict[str, Any]]  # per bug, its workaround's proof (``read_workarounds``)
    explored: dict[str, Any] | None = None  # ``read_exploration``: what the open search ran and found
    explored_workarounds: dict[str, dict[str, Any]] | None = None  # per bug (``read_explored_workarounds``)
    explore_error: str = ""  # why the explorer gave no report, where it gave none (the verdicts stand)


@dataclass(frozen=True)
class Exploring:
    """The explorer's part of a confirmation: ``budget`` seconds of open search from ``seed``, then
    ``budget`` seconds for each workaround that can be put in force; ``database``: the folder of
    departing cases replayed first and kept (``python -m repro --explore --database``), if any."""

    budget: float
    seed: int = 0
    database: Path | None = None


@dataclass(frozen=True)
class Installer:
    """Where torch comes from (``index_url`` only), where its dependencies may also come from
    (``extra_index_url``), and whether pip's own configuration applies."""

    index_url: str
    extra_index_url: str | None = None
    use_pip_config: bool = False


class ReportError(Exception):
    """The run produced no report (a failed install, a crash, a timeout, output that is not a report):
    an error of that release, retried on the next run, never a verdict."""


class TimedOut(ReportError):
    """The install or the run took longer than ``--timeout``."""


def confirm(version: str, installer: Installer, timeout: float, exploring: Exploring | None = None) -> Measurement:
    """Install ``torch==version`` as ``installer`` says, run ``python -m repro --json --slow`` and
    prove every workaround (``--workarounds --json``): a verdict per catalogued bug, or ``ReportError``.
    With ``exploring``, the explorer runs there too (``_explore``)."""
    with tempfile.TemporaryDirectory(prefix=f"torch-{version}-") as tmp:
        env_dir = Path(tmp) / "venv"
        try:
            python = _create(env_dir, version, installer, timeout, EXPLORING if exploring else ())
            report = _repro(python, tmp, timeout, "--slow")
            verdicts = read_report(report.stdout, report.stderr, report.returncode)  # none: no proofs either
            proofs = _repro(python, tmp, timeout, "--workarounds")
        except subprocess.TimeoutExpired:
            raise TimedOut(f"timed out after {timeout:.0f} s") from None
        except subprocess.CalledProcessError as err:
            tail = (err.stderr or err.stdout or "").strip().splitlines()[-1:] or ["no output"]
            raise ReportError(f"installing torch {version} failed: {tail[0]}") from None
        measured = Measurement(
            verdicts, read_support(report.stdout), read_workarounds(proofs.stdout, proofs.stderr, proofs.returncode)
        )
        return _explore(python, tmp, exploring, measured) if exploring else measured


def _explore(python: Path, cwd: str, exploring: Exploring, measured: Measurement) -> Measurement:
    """The open search (``--explore``) and each workaround on generated models (``--explore
    --workarounds``), each given its budget and ``EXPLORE_SLACK`` seconds more per exploration to end
    (its workers start, its last case ends): what they gave added to ``measured``; where one gave no
    report, the reason (``explore_error``), the verdicts standing."""
    options = ["--budget", f"{exploring.budget:g}", "--seed", str(exploring.seed)]
    if exploring.database:
        options += ["--database", str(exploring.database)]
    try:
        search = _repro(python, cwd, exploring.budget + EXPLORE_SLACK, "--explore", *options)
        explored = read_exploration(search.stdout, search.stderr, search.returncode)
        per_bug = (exploring.budget + EXPLORE_SLACK) * len(BUGS)  # at most, every bug has a workaround to try
        tried = _repro(python, cwd, per_bug, "--explore", "--workarounds", *options)
        workarounds = read_explored_workarounds(tried.stdout, tried.stderr, tried.returncode)
    except subprocess.TimeoutExpired as err:
        return replace(measured, explore_error=f"the explorer timed out after {err.timeout:.0f} s")
    except ReportError as err:
        return replace(measured, explore_error=str(err))
    return replace(measured, explored=explored, explored_workarounds=workarounds)


def _repro(python: Path, cwd: str, timeout: float, *mode: str) -> subprocess.CompletedProcess[str]:
    """``python -m repro --json MODE --device cpu`` in the throwaway environment, with this checkout."""
    return subprocess.run(
        [str(python), "-m", "repro", "--json", *mode, "--device", "cpu"],
        cwd=cwd,
        timeout=timeout,
        capture_output=True,
        text=True,
        env={**allowed_env(RUN_ENV), "PYTHONPATH": str(PROJECT)},
    )


def _silent(stderr: str, returncode: int) -> str:
    """Why a run left no report: its last line on stderr, else how it ended (a signal kills it silently)."""
    lines = stderr.strip().splitlines()
    if lines:
        return lines[-1]
    if returncode < 0:
        try:
            return f"no output; killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"no output; killed by signal {-returncode}"
    return f"no output; exit code {returncode}" if returncode else "no output"


def read_workarounds(stdout: str, stderr: str, returncode: int = 0) -> dict[str, dict[str, Any]]:
    """Per bug, what ``--workarounds --json`` measured: status, workaround, runs, matched, summary,
    verdict, what it held on, the scenario table's hash and the device. Output that is not such a
    report is a ``ReportError``; an entry that is not such is left out (the ledger validates each
    again when it is written)."""
    try:
        report = json.loads(stdout)
    except (ValueError, RecursionError):
        raise ReportError(f"proving the workarounds printed no report: {_silent(stderr, returncode)}") from None
    entries = report.get("workarounds") if isinstance(report, dict) else None
    if not isinstance(entries, list):
        raise ReportError(f"the workarounds' JSON is not a report with a list of proofs: {stdout.strip()[:80]!r}")
    table, device = report.get("scenario_table"), report.get("device")
    where = ({"table": table[:16]} if isinstance(table, str) else {}) | (
        {"device": device.split(":")[0]} if isinstance(device, str) else {}
    )
    kept = {}
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            optional = {k: entry[k] for k in ("verdict", "space") if k in entry}
            proof = {k: entry.get(k) for k in PROOF_KEYS} | optional | where
            if ledger_io.valid_proof(proof):
                kept[entry["id"]] = proof
    return kept


def read_exploration(stdout: str, stderr: str, returncode: int = 0) -> dict[str, Any]:
    """The ledger's record of ``--explore --json`` (``ledger.valid_exploration``): what ran, departures
    counted by what explains them, the catalogued bugs among their causes, each unexplained departure
    in one line (``MAX_UNEXPLAINED`` at most), cases per API. Output that is not such a report is a
    ``ReportError``."""
    report = _explorer_report(stdout, stderr, returncode)
    departures = report.get("departures")
    if not isinstance(departures, list) or not all(
        isinstance(d, dict) and all(isinstance(d.get(k), str) for k in ("explanation", "kind", "step", "detail"))
        for d in departures
    ):
        raise ReportError(f"the explorer's JSON is not a report of departures: {stdout.strip()[:80]!r}")
    unexplained = [d for d in departures if d.get("script")]  # only an unexplained one carries its script
    record = {
        "seed": report.get("seed"),
        "budget_s": report.get("budget_s"),
        "cases": report.get("cases"),
        "replayed": report.get("replayed"),
        "seconds": report.get("seconds"),
        "departures": {ledger_io.capped(e, 64): n for e, n in Counter(d["explanation"] for d in departures).items()},
        "bugs": sorted({d["cause"] for d in departures if isinstance(d.get("cause"), str)}),
        "unexplained": [
            ledger_io.capped(f"{d['kind']} at {d['step']}: {d['detail']}", ledger_io.TEXT_CAP)
            for d in unexplained[: ledger_io.MAX_UNEXPLAINED]
        ],
        "apis": report.get("apis_covered"),
    }
    if not ledger_io.valid_exploration(record):
        raise ReportError(f"the explorer's JSON is not a report of what it ran: {stdout.strip()[:80]!r}")
    return record


def read_explored_workarounds(stdout: str, stderr: str, returncode: int = 0) -> dict[str, dict[str, Any]]:
    """Per bug tried, the ledger's record of its workaround on generated models (``ledger.valid_explored``)
    from ``--explore --workarounds --json``; an entry that is not such is left out. Output that is not
    such a report is a ``ReportError``."""
    report = _explorer_report(stdout, stderr, returncode)
    entries = report.get("explorations")
    if not isinstance(entries, list):
        raise ReportError(f"the explorer's JSON is not a report of workarounds tried: {stdout.strip()[:80]!r}")
    kept = {}
    for entry in entries:
        tried = entry.get("workaround") if isinstance(entry, dict) else None
        if isinstance(tried, dict) and isinstance(entry.get("id"), str):
            record = {
                "workaround": tried.get("name"),
                "verdict": tried.get("verdict"),
                "space": tried.get("space"),
                "cases": entry.get("cases"),
            }
            if ledger_io.BUG_ID.fullmatch(entry["id"]) and ledger_io.valid_explored(record):
                kept[entry["id"]] = record
    return kept


def _explorer_report(stdout: str, stderr: str, returncode: int) -> dict[str, Any]:
    """The explorer's JSON object (exit 0: nothing unexplained or every workaround holds; 1: not so), or
    ``ReportError``."""
    try:
        report = json.loads(stdout) if returncode in (0, 1) else None
    except (ValueError, RecursionError):
        report = None
    if not isinstance(report, dict):
        raise ReportError(f"the explorer printed no report: {_silent(stderr, returncode)}")
    return report


def read_report(stdout: str, stderr: str, returncode: int = 0) -> dict[str, Dynamic]:
    """The reproducer's verdict per bug. No JSON at all (a crash), or JSON that is not an object with a
    known outcome, a conclusion and a status per bug, is a ``ReportError``."""
    try:
        report = json.loads(stdout)
    except RecursionError:
        report = None
    except ValueError:
        raise ReportError(f"the reproducer printed no report: {_silent(stderr, returncode)}") from None
    if not (
        isinstance(report, dict)
        and report.get("outcome") in OUTCOMES
        and isinstance(report.get("conclusion"), str)
        and isinstance(report.get("bugs"), list)
        and all(_is_bug_status(b) for b in report["bugs"])
    ):
        raise ReportError(
            f"the reproducer's JSON is not a report with an outcome ({', '.join(OUTCOMES)}), "
            f"a conclusion and a status per bug: {stdout.strip()[:80]!r}"
        )
    return {b["id"]: Dynamic(b["status"], b["detail"]) for b in report["bugs"] if b["status"] in STATUSES}


def read_support(stdout: str) -> dict[str, Any]:
    """The support column of a report ``read_report`` accepted, keyed by its device, with rows that carry
    codes, each cell cut to ``MAX_CELL``; an older reproducer's report (no codes, no platform) gives none,
    and a row that is not such is left out. The ledger validates the column again when it is written."""
    report = json.loads(stdout)
    rows, device = report.get("support"), report.get("device")
    python, platform = report.get("python_version"), report.get("platform")
    if not (
        isinstance(rows, list) and isinstance(device, str) and isinstance(python, str) and isinstance(platform, str)
    ):
        return {}
    kept = {  # a long cell (1.13.1's order-dependent hooks: 3,900 characters) is cut as the ledger cuts it
        row["api"]: {
            "codes": row["codes"],
            "cell": ledger_io.capped(row["cell"], ledger_io.MAX_CELL),
            "left_out": row.get("left_out", 0),
        }
        for row in rows
        if isinstance(row, dict)
        and isinstance(row.get("api"), str)
        and isinstance(row.get("cell"), str)
        and isinstance(row.get("codes"), list)
    }
    column = {"python": python, "platform": platform, "rows": kept}
    if isinstance(report.get("scenario_table"), str):  # which scenario table measured it (a short hash)
        column["table"] = report["scenario_table"][:16]
    return {device.split(":")[0]: column} if kept and ledger_io.valid_column(column) else {}


def _is_bug_status(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("id"), str)
        and isinstance(entry.get("detail"), str)
        and entry.get("status") in (*STATUSES, "skipped")
    )


def allowed_env(names: tuple[str, ...]) -> dict[str, str]:
    """The variables ``names`` (in either case) and the locale's, from this process's environment."""
    return {k: v for k, v in os.environ.items() if k.upper() in names or k.startswith("LC_")}


def _create(env_dir: Path, version: str, installer: Installer, timeout: float, extra: tuple[str, ...] = ()) -> Path:
    python = env_dir / "bin" / "python"
    env = allowed_env(INSTALL_ENV)
    if installer.use_pip_config:
        env |= {k: v for k, v in os.environ.items() if k.startswith("PIP_")}
        env["PIP_CONSTRAINT"] = os.devnull  # a machine-wide torch cap must not apply
    else:
        env["PIP_CONFIG_FILE"] = os.devnull  # pip reads no configuration file at all
    if shutil.which("uv", path=env.get("PATH")) and not installer.use_pip_config:
        create = ["uv", "venv", "-q", "--no-config", "--python", sys.executable, str(env_dir)]
        install = ["uv", "pip", "install", "-q", "--no-config", "--python", str(python)]
    else:  # a venv without its own pip (seconds faster), filled by this interpreter's pip
        create = [sys.executable, "-m", "venv", "--without-pip", str(env_dir)]
        install = [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-input",
            "--disable-pip-version-check",
        ]
    for command in [create, *_installs(install, version, installer, extra)]:
        subprocess.run(command, check=True, timeout=timeout, capture_output=True, text=True, env=env)
    return python


def _installs(install: list[str], version: str, installer: Installer, extra: tuple[str, ...] = ()) -> list[list[str]]:
    """``torch==version`` and the rest of what ``python -m repro`` imports (``repro.requirements``), and
    ``extra`` (what --explore needs). With an extra index, torch goes first, alone, from the index
    alone: neither pip nor uv then replaces it."""
    requirement, index = [f"torch=={version}", *NEEDED[1:], *extra], ["--index-url", installer.index_url]
    if not installer.extra_index_url:
        return [[*install, *index, *requirement]]
    return [
        [*install, *index, "--no-deps", requirement[0]],
        [*install, *index, "--extra-index-url", installer.extra_index_url, *requirement],
    ]
