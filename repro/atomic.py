"""Files this project owns are replaced in one rename, and files it appends to get one ``write``.

A reader (or a crash, or a full disk) then sees the old file or the new one, never a truncated or
partial one. The temporary file lies in the target's folder, so the rename stays on one file system,
and its name (``.NAME.repro-write-PID-XXXXXXXX``) is one only these writers use: a writer removes only
such leftovers, never a user's own ``NAME.something.tmp``. Each ``replace`` first removes those its
writer's process (``PID``) left behind and no longer runs; a locked writer (the ledger's) removes
them all, since whoever holds its lock is the only writer.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path

MARK = ".repro-write-"  # in every temporary file's name: what makes a leftover ours
_SUFFIX = re.compile(r"(?:(\d{1,10})-)?[a-z0-9_]{8}")  # the writer's process id (since 2026-12-05), tempfile's part


class WriteError(OSError):
    """A write failed and the old file is intact (one sentence; exit 2 where a tool writes it); ``why``
    is the cause alone, for a line that names the file otherwise."""

    def __init__(self, message: str, why: str = "") -> None:
        super().__init__(message)
        self.why = why or message


def unwritable(path: Path) -> str | None:
    """Why ``replace(path, ...)`` would fail, checked before any work (None: it would not): the folder
    missing or read-only, the file read-only, or a folder that takes no new file (/proc, /sys, which
    ``os.access`` calls writable). Its folder is never created: a misspelt path is refused."""
    target = path.resolve()
    if not target.parent.is_dir():
        return f"its directory {target.parent} does not exist"
    if not os.access(target.parent, os.W_OK | os.X_OK):
        return f"its directory {target.parent} is read-only"
    if target.exists() and not os.access(target, os.W_OK):
        return "the file is read-only"
    try:  # the temporary file is made there, as replace() makes it
        with tempfile.TemporaryFile(dir=target.parent):
            pass
    except OSError:
        return f"{target.parent} takes no new file"
    return None


def _prefix(path: Path) -> str:
    return f".{path.name}{MARK}"


def leftovers(path: Path, *, dead_only: bool = False) -> list[Path]:
    """The temporary files writers of ``path`` left behind: only names this module makes. With
    ``dead_only``, only those whose writer's process is gone (a name without one, from before process
    ids were written, is never known to be dead)."""
    prefix = _prefix(path)
    found = []
    for p in path.parent.glob(f".{path.name}*"):
        match = _SUFFIX.fullmatch(p.name[len(prefix) :]) if p.name.startswith(prefix) else None
        if match and not (dead_only and (match.group(1) is None or _running(int(match.group(1))))):
            found.append(p)
    return found


def _running(pid: int) -> bool:
    """Is process ``pid`` alive (or is it this one)? A process of another user counts as alive."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError):  # no such process can exist
        return False
    return True


def new_file_mode() -> int:
    """The mode ``open`` gives a new file here (0666 less the umask), not ``mkstemp``'s 0600."""
    umask = os.umask(0o077)  # reading the umask means setting it: briefly a stricter one, never a looser
    os.umask(umask)
    return 0o666 & ~umask


def replace(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) in one rename, keeping an existing file's mode; a failure
    (a full disk, an unencodable string, a read-only folder) leaves the old file as it was and raises
    ``WriteError`` in one sentence. Call with a symlink resolved: the rename replaces what it names."""
    path = Path(path)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as err:
        problem = f"its text cannot be encoded ({err.reason})"
        raise WriteError(f"{path} was not written: {problem}; it stays as it was.") from None
    tmp = None
    for stale in leftovers(path, dead_only=True):  # a killed writer's, even one that held no lock
        try:
            stale.unlink(missing_ok=True)
        except OSError:
            pass
    try:
        mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else new_file_mode()
        fd, tmp = tempfile.mkstemp(prefix=f"{_prefix(path)}{os.getpid()}-", dir=path.parent)
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode)
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
        tmp = None
    except OSError as err:
        raise WriteError(f"{path} was not written ({err.strerror or err}); it stays as it was.") from None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def append(path: str | Path, text: str) -> None:
    """Append ``text`` to ``path`` in one ``write`` (``$GITHUB_STEP_SUMMARY``, ``$GITHUB_OUTPUT``): a
    failure leaves no half of it there. Raises ``WriteError`` in one sentence."""
    data = text.encode("utf-8", "replace")
    try:
        # non-blocking: a FIFO nobody reads is refused (ENXIO) instead of hanging the run
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o666)
    except OSError as err:
        raise WriteError(f"{path} cannot be written ({err.strerror or err}).", str(err.strerror or err)) from None
    size = None
    try:
        size = os.fstat(fd).st_size
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(28, f"only {written} of {len(data)} bytes were written")
    except OSError as err:
        if size is not None:  # no half of a summary: what was appended is taken back
            try:
                os.ftruncate(fd, size)
            except OSError:
                pass
        raise WriteError(f"{path} cannot be written ({err.strerror or err}).", str(err.strerror or err)) from None
    finally:
        os.close(fd)
