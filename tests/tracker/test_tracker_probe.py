"""The static probe on sources Python would read, and on sources it cannot judge (issue 8, item 18).

Sources are decoded as Python decodes them (a BOM, a PEP 263 coding line). Content that cannot be
judged (too deep, too big, not Python) is ``unknown`` with the reason, final; a member that cannot be
read (a corrupt compressed member, a CRC mismatch) is an error, retried next run.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile

import pytest
from index_server import BUGGY, FIXED_IGNORED, IndexServer, build_wheel, shape
from packaging.version import Version

from helpers import flag
from tracker.index import Release, WheelFile
from tracker.probe import MEMBERS
from tracker.remote import make_session
from tracker.sweep import Options, select, static_entry

WHEEL = "torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl"
MODULE_PY = "torch/nn/modules/module.py"
RECURSIVE_PY = "torch/jit/_recursive.py"


def probe(index: IndexServer, data: bytes) -> dict:
    """The ledger entry the sweep records for a release whose only wheel is ``data``."""
    index.wheels[WHEEL] = data
    release = Release(Version("2.13.0"), (WheelFile(WHEEL, f"{index.url}/files/{WHEEL}", None, False),))
    return static_entry(release, False, make_session)


def wheel_of(sources: dict[str, bytes]) -> bytes:
    """A wheel whose members hold exactly these bytes (``build_wheel`` writes text, 20 times over)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("torch/lib/libtorch.so", bytes(1024))
        for name, data in sources.items():
            archive.writestr(name, data, zipfile.ZIP_DEFLATED)
    return out.getvalue()


def encoded(**edits: bytes) -> dict[str, bytes]:
    return {**{name: text.encode() for name, text in BUGGY.items()}, **edits}


@pytest.mark.parametrize(
    "edit",
    [
        b"\xef\xbb\xbf" + BUGGY[MODULE_PY].encode(),
        b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + BUGGY[MODULE_PY].encode(),
    ],
    ids=["utf8-bom", "latin-1-coding-line"],
)
def test_sources_are_decoded_as_python_decodes_them(index, edit):
    entry = probe(index, wheel_of(encoded(**{MODULE_PY: edit})))
    assert flag(entry)["static"]["verdict"] == "present" and "error" not in entry


def test_bom_and_coding_line_in_the_changed_file_still_show_the_change(index):
    data = b"\xef\xbb\xbf# coding: utf-8\n" + FIXED_IGNORED[RECURSIVE_PY].encode()
    entry = probe(index, wheel_of(encoded(**{RECURSIVE_PY: data})))
    assert flag(entry)["static"]["verdict"] == "changed"


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"# coding: no-such-codec\nx = 1\n", "unknown encoding: no-such-codec"),
        (b"x = 1\n\n\n# \xff\xfe\n", "can't decode byte 0xff"),
        ("# coding: utf-16\nx = 1\n".encode("utf-16"), "invalid or missing encoding declaration"),
    ],
    ids=["unknown-codec", "invalid-utf8", "utf16-python-cannot-read"],
)
def test_not_python_source_is_unknown_and_final(index, data, says):
    entry = probe(index, wheel_of(encoded(**{MODULE_PY: data})))
    assert flag(entry)["static"]["verdict"] == "unknown" and "error" not in entry
    assert (
        flag(entry)["static"]["evidence"][0].startswith(f"{MODULE_PY} is not Python source")
        and says in flag(entry)["static"]["evidence"][0]
    )


@pytest.mark.slow  # a wheel parsed to the parser's limits (0.9 s each)
@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("x = " + "1+" * 5_000 + "1\n", "RecursionError"),
        ("x = " + "-" * 100_000 + "1\n", "MemoryError"),
    ],
    ids=["recursion", "memory"],
)
def test_sources_too_deep_to_parse_are_unknown_and_final(index, source, error):
    entry = probe(index, build_wheel(shape(**{MODULE_PY: source}), padding=1024))
    assert flag(entry)["static"]["verdict"] == "unknown" and "error" not in entry
    assert flag(entry)["static"]["evidence"] == [f"the sources are too deeply nested or too large to analyse ({error})"]


def corrupt(member: str) -> bytes:
    """A wheel whose ``member`` has its deflated data damaged (zlib fails, or the CRC does)."""
    data = bytearray(build_wheel(BUGGY, padding=1024))
    local = data.find(member.encode()) - 30  # its local header
    start = local + 30 + len(member)
    for offset in range(start + 2, start + 40):
        data[offset] ^= 0x55
    return bytes(data)


def test_a_corrupt_member_is_an_error_retried_next_run(index, tmp_path):
    entry = probe(index, corrupt(MODULE_PY))
    assert flag(entry)["static"]["verdict"] == "unknown" and entry["error"].startswith(f"{MODULE_PY} is unreadable: ")
    assert any(word in entry["error"] for word in ("Error -3", "Bad CRC-32", "invalid")), entry["error"]
    release = Release(Version("2.13.0"), ())
    assert select([release], {"2.13.0": entry}, Options(ledger=tmp_path / "ledger.json")) == [release]


def spread_wheel(gap: int) -> bytes:
    """A wheel whose source members each follow ``gap`` incompressible bytes, as torch's lie among its
    thousands of files."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for number, (name, text) in enumerate(BUGGY.items()):
            archive.writestr(f"torch/lib/part{number}.so", os.urandom(gap), zipfile.ZIP_STORED)
            archive.writestr(name, text * 20, zipfile.ZIP_DEFLATED)
    return out.getvalue()


def floor_of(data: bytes) -> int:
    """What no reader can skip: end records, central directory, each read member's local header and data."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        total = len(data) - archive.start_dir
        for member in MEMBERS:
            info = archive.getinfo(member)
            name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
            total += 30 + name_length + extra_length + info.compress_size
    return total


@pytest.mark.parametrize(("gap", "requests"), [(1024 * 1024, 5), (1024, 3)], ids=["far-apart", "close-together"])
def test_reads_the_floor_in_at_most_five_requests(index, gap, requests):
    """End records, then the central directory in one exact read, then the members: one request each,
    or one for those lying close together. torch/version.py is not read: the version is in the name."""
    data = spread_wheel(gap)
    probe_figures = probe(index, data)["probe"]
    assert probe_figures["requests"] == requests
    assert floor_of(data) <= probe_figures["bytes_fetched"] <= floor_of(data) + 3 * 1024


def test_fingerprints_ignore_docstrings_and_layout_but_not_code():
    import ast

    from repro.source_checks import fingerprint

    def prints(source: str) -> dict[str, str]:
        return fingerprint({MODULE_PY: ast.parse(source)}, ((MODULE_PY, "Module.f"), (MODULE_PY, "Module.g")))

    plain = prints("class Module:\n    def f(self, x):\n        return x\n")
    assert prints('class Module:\n    def f(self, x):\n        """Why."""\n\n        return (x)\n') == plain
    assert prints("class Module:\n    def f(self, x):\n        return x + 1\n") != plain
    assert plain[f"{MODULE_PY}:Module.g"] == "absent"
