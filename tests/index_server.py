"""A real HTTP server on loopback that serves a package index and wheels the tests build.

Faults are switched per test through ``IndexServer.faults``: ranges unsupported, suffix
ranges rejected, gzip applied to ranges, a number of 503s first, a reset mid-body.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import re
import threading
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, unquote

BUGGY = {
    "torch/jit/_recursive.py": 'ignored_attributes = [\n    "_version",\n    "_backward_hooks",\n]\n',
    "torch/jit/_script.py": (
        "class ScriptMeta(type):\n    def __init__(cls, name, bases, attrs):\n"
        "        super().__init__(name, bases, attrs)\n\n"
        "class ScriptModule:\n    def __setattr__(self, attr, value):\n"
        "        if '_actual_script_module' not in self.__dict__:\n"
        "            return super().__setattr__(attr, value)\n"
        "        setattr(self._actual_script_module, attr, value)\n\n"
        "def script_method(fn):\n    return fn\n"
    ),
    "torch/nn/modules/module.py": (
        "class Module:\n    def register_full_backward_hook(self, hook, prepend=False):\n"
        "        self._is_full_backward_hook = True\n        return hook\n"
    ),
    "torch/version.py": "__version__ = '9.9.9'\n",
}


def shape(**edits: str) -> dict[str, str]:
    """The buggy sources with some files replaced; an empty string drops the file."""
    return {k: v for k, v in {**BUGGY, **edits}.items() if v != ""}


FIXED_IGNORED = shape(**{"torch/jit/_recursive.py": 'ignored_attributes = ["_version", "_is_full_backward_hook"]\n'})
FIXED_SETATTR = shape(
    **{
        "torch/jit/_script.py": BUGGY["torch/jit/_script.py"].replace(
            "        setattr(self._actual_script_module",
            "        if attr == '_is_full_backward_hook':\n"
            "            return object.__setattr__(self, attr, value)\n        setattr(self._actual_script_module",
        )
    }
)
FIXED_MODULE = shape(
    **{
        "torch/nn/modules/module.py": BUGGY["torch/nn/modules/module.py"].replace(
            "self._is_full_backward_hook = True", "object.__setattr__(self, '_is_full_backward_hook', True)"
        )
    }
)
REMOVED_RAISES = shape(
    **{
        "torch/jit/_script.py": BUGGY["torch/jit/_script.py"].replace(
            "def script_method(fn):\n    return fn",
            "def script_method(fn):\n    raise RuntimeError('TorchScript was removed')",
        )
    }
)
REMOVED_GONE = shape(**{"torch/jit/_script.py": "def unrelated():\n    pass\n"})


def build_wheel(sources: dict[str, str], padding: int = 4 * 1024 * 1024) -> bytes:
    """A wheel-shaped zip: the sources deflated, plus incompressible padding like torch's .so files."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("torch/lib/libtorch.so", os.urandom(padding), zipfile.ZIP_STORED)
        for name, text in sources.items():
            archive.writestr(name, text * 20, zipfile.ZIP_DEFLATED)  # padded to realistic sizes
    return out.getvalue()


def build_pure_wheel(name: str, version: str, files: dict[str, bytes], tag: str = "py3-none-any") -> tuple[str, bytes]:
    """An installable pure-Python wheel (for pip in the tracker's throwaway environments); a more specific
    ``tag`` (``cp311-none-any``) makes installers prefer it to a ``py3-none-any`` one."""
    info = f"{name}-{version}.dist-info"
    files = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: {tag}\n".encode(),
    }
    record = [f"{path},sha256={_digest(data)},{len(data)}" for path, data in files.items()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
        archive.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return f"{name}-{version}-{tag}.whl", out.getvalue()


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


@dataclass
class Faults:
    ranges: bool = True
    suffix: bool = True
    gzip: bool = False
    fail_first: int = 0  # answer this many requests with 503 first
    reset_once: bool = False  # cut the first range body short, once
    reset_index_once: bool = False  # cut the first index answer short, once
    delay: float = 0.0  # seconds before answering each request for a file (a slow mirror)


@dataclass
class IndexServer:
    wheels: dict[str, bytes] = field(default_factory=dict)  # filename -> bytes
    extra: dict[str, list[str]] = field(default_factory=dict)  # version -> non-wheel filenames
    yanked: set[str] = field(default_factory=set)
    faults: Faults = field(default_factory=Faults)
    hits: Counter = field(default_factory=Counter)
    raw_index: bytes | None = None  # serve this instead of a valid JSON API or PEP 691 answer
    html_only: bool = False  # a PEP 503 mirror that ignores the Accept header
    nightly: str | None = None  # a path like /whl/nightly/cpu: PyTorch's layout, no JSON API, a page at <path>/torch/
    issues: dict[str, dict | bytes] = field(default_factory=dict)  # GitHub API path -> issue JSON (or raw body)
    authorizations: list[str | None] = field(default_factory=list)
    url: str = ""  # what start() returned, set by the fixture

    def start(self) -> str:
        handler = type("Handler", (_Handler,), {"index": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        # shutdown() waits for the next poll; the default 0.5 s would add that much to every test.
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_port}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def files(self, project: str = "torch") -> list[tuple[str, str]]:
        rows = [(n.split("-")[1], n) for n in self.wheels if n.split("-")[0].lower() == project]
        return rows + [(v, n) for v, names in self.extra.items() for n in names]

    def json_api(self) -> bytes:
        releases: dict[str, list] = {}
        for version, name in self.files():
            releases.setdefault(version, []).append(
                {
                    "filename": name,
                    "url": f"../../files/{name}",
                    "size": len(self.wheels.get(name, b"")),
                    "yanked": name in self.yanked,
                }
            )
        return json.dumps({"info": {"name": "torch"}, "releases": releases}).encode()

    def simple_json(self, project: str = "torch") -> bytes:
        return json.dumps(
            {
                "meta": {"api-version": "1.0"},
                "name": project,
                "files": [
                    {"filename": n, "url": f"../../files/{n}", "yanked": n in self.yanked}
                    for _, n in self.files(project)
                ],
            }
        ).encode()

    def simple_html(self, project: str = "torch") -> bytes:
        mark = ' data-yanked=""'
        links = "".join(
            f'<a href="../../files/{n}"{mark if n in self.yanked else ""}>{n}</a><br>' for _, n in self.files(project)
        )
        return f"<!DOCTYPE html><html><body>{links}</body></html>".encode()

    def nightly_html(self) -> bytes:
        """PyTorch's own PEP 503 page: root-relative hrefs with '+' quoted and a #sha256= fragment."""
        links = "".join(
            f'<a href="/files/{quote(n)}#sha256={hashlib.sha256(self.wheels.get(n, b"")).hexdigest()}" '
            f'data-requires-python="&gt;=3.10">{n}</a><br/>\n'
            for _, n in self.files()
        )
        return f"<!DOCTYPE html>\n<html>\n<body>\n<h1>Links for torch</h1>\n{links}</body>\n</html>\n".encode()


class _Handler(BaseHTTPRequestHandler):
    index: IndexServer

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        index, path = self.index, self.path
        index.hits[path] += 1
        if index.faults.fail_first > 0:
            index.faults.fail_first -= 1
            return self._send(503, b"busy")
        if path in index.issues:
            index.authorizations.append(self.headers.get("Authorization"))
            issue = index.issues[path]
            return self._send(
                200, issue if isinstance(issue, bytes) else json.dumps(issue).encode(), "application/json"
            )
        if index.nightly is not None and path == f"{index.nightly}/torch/":
            return self._send(200, index.nightly_html(), "text/html")
        if path == "/pypi/torch/json":
            body = index.raw_index or index.json_api()
            if index.faults.reset_index_once:
                index.faults.reset_index_once = False
                return self._cut_short(200, body, {})
            return self._send(200, body, "application/json")
        simple = re.fullmatch(r"/simple/([a-z0-9._-]+)/", path)
        if simple:
            project = simple.group(1)
            if not index.html_only and "application/vnd.pypi.simple.v1+json" in self.headers.get("Accept", ""):
                return self._send(
                    200, index.raw_index or index.simple_json(project), "application/vnd.pypi.simple.v1+json"
                )
            return self._send(200, index.simple_html(project), "text/html")
        name = unquote(path.rsplit("/", 1)[-1])  # pip asks for torch-9.9.0%2Bcpu-...
        if path.startswith("/files/") and name in index.wheels:
            time.sleep(index.faults.delay)
            return self._file(index.wheels[name])
        self._send(404, b"not found")

    def _file(self, data: bytes) -> None:
        faults, spec = self.index.faults, self.headers.get("Range")
        if not spec or not faults.ranges:
            return self._send(200, data, "application/octet-stream")
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", spec)
        assert match, f"malformed Range {spec!r}"  # the clients under test send only well-formed ones
        first, last = match.groups()
        if not first:
            if not faults.suffix:
                return self._send(416, b"suffix ranges not supported")
            first, last = max(0, len(data) - int(last)), len(data) - 1
        first, last = int(first), min(int(last or len(data) - 1), len(data) - 1)
        body = data[first : last + 1]
        headers = {"Content-Range": f"bytes {first}-{last}/{len(data)}"}
        if faults.gzip:
            body, headers["Content-Encoding"] = gzip.compress(body), "gzip"
        if faults.reset_once and len(body) > 1000:
            faults.reset_once = False
            return self._cut_short(206, body, headers)
        self._send(206, body, "application/octet-stream", headers)

    def _cut_short(self, status: int, body: bytes, headers: dict) -> None:
        """Promise the whole body, send a little of it, and drop the connection."""
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body[: min(100, len(body) // 2)])
        self.wfile.flush()
        self.connection.shutdown(2)

    def _send(self, status: int, body: bytes, kind: str = "text/plain", headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)
