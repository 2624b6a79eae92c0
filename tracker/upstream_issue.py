"""The upstream issue's state and close reason, from GitHub's REST API, for the ledger.

A token from ``GITHUB_TOKEN`` is sent when set and never printed or recorded. An
unreachable API is recorded as state ``unknown``: it is not an error of the run.
"""

from __future__ import annotations

import os
import re
from typing import Any

import requests

from tracker.remote import FetchError, Traffic, get

DEFAULT_API = "https://api.github.com"
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
    token = os.environ.get("GITHUB_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        data = get(session, f"{api_url.rstrip('/')}/repos/{repo}/issues/{number}", Traffic(), **headers).json()
    except (FetchError, ValueError) as err:
        message = str(err).replace(token, "***") if token else str(err)
        return {"state": "unknown", "error": message, "checked_at": checked_at}
    return {
        "state": data.get("state", "unknown"),
        "state_reason": data.get("state_reason"),
        "closed_at": data.get("closed_at"),
        "title": data.get("title"),
        "checked_at": checked_at,
    }
