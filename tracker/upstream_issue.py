"""The upstream issue's state and close reason, from GitHub's REST API, for the ledger.

A token from ``GITHUB_TOKEN`` (surrounding whitespace stripped) is sent when set, only to the
API URL given (``get`` keeps it off redirects to another origin), and never printed or recorded:
every form of it, raw, stripped or escaped, is masked in a recorded error. An unreachable API,
or an answer larger than ``Limits.max_api_bytes`` or not an issue object, is recorded as state
``unknown``: it is not an error of the run. Only strings are stored for the fields recorded.
"""

from __future__ import annotations

import os
import re
from typing import Any

import requests

from tracker.remote import FetchError, Limits, Traffic, get, parse_json

DEFAULT_API = "https://api.github.com"
FIELDS = ("state_reason", "closed_at", "title")  # recorded beside "state", strings or None
REF = re.compile(r"(?P<repo>[\w.-]+/[\w.-]+)#(?P<number>\d+)")


def parse_ref(text: str) -> tuple[str, int]:
    """'pytorch/pytorch#181473' -> ('pytorch/pytorch', 181473)."""
    match = REF.fullmatch(text.strip())
    if not match:
        raise ValueError(f"not an issue reference like owner/repo#123: {text!r}")
    return match["repo"], int(match["number"])


def issue_state(session: requests.Session, api_url: str, ref: str, checked_at: str) -> dict[str, Any]:
    repo, number = parse_ref(ref)
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    raw_token = os.environ.get("GITHUB_TOKEN", "")
    if raw_token.strip():
        headers["Authorization"] = f"Bearer {raw_token.strip()}"
    url = f"{api_url.rstrip('/')}/repos/{repo}/issues/{number}"
    try:
        data = parse_json(get(session, url, Traffic(), Limits.from_env().max_api_bytes, **headers))
        if not isinstance(data, dict):
            raise FetchError(f"{url} answered JSON that is not an issue object")
    except FetchError as err:
        return {"state": "unknown", "error": _mask(str(err), raw_token), "checked_at": checked_at}
    return {
        "state": _text(data, "state") or "unknown",
        **{key: _text(data, key) for key in FIELDS},
        "checked_at": checked_at,
    }


def _text(data: dict[str, Any], key: str) -> str | None:
    """A field the ledger stores only as a string: anything else the API answers is recorded as absent."""
    value = data.get(key)
    return value if isinstance(value, str) else None


def _mask(text: str, token: str) -> str:
    """``text`` with the token in every form it can take in a message (raw, stripped, escaped) as ***."""
    if not token.strip():
        return text
    forms = {token, token.strip(), repr(token)[1:-1], repr(token.strip())[1:-1]}
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, "***")
    return text
