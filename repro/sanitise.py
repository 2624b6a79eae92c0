"""Text from outside (wheels, indexes, pip, PyTorch's sources, GitHub's API) made inert where it is shown.

Applied where text is rendered, never where it is read: the ledger and ``--json`` keep the raw text.

* ``for_terminal``: control characters (C0, DEL, C1, ESC above all) and the bidirectional overrides
  are shown as visible escapes (``\\x1b``, ``\\u202e``); newline and tab survive only in a block that
  is meant to span lines (``multiline=True``).
* Markdown (step summaries, pull request title and body, issue bodies): ``code_span`` puts the text
  in a code span whose fence is longer than any backtick run inside (HTML, links and @-mentions are
  inert there); ``code_block`` does the same for a fenced block; ``plain`` escapes what Markdown and
  HTML would act on and breaks @-mentions with a zero-width joiner; ``cell`` escapes a table cell's
  ``|`` and line breaks.
"""

from __future__ import annotations

import re

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
SEPARATORS = "\u2028\u2029\x85"  # Unicode line and paragraph separators: lines the reader does not see
_SHOWN = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI}{SEPARATORS}]")
ZWJ = "\u200d"
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")  # @user, @org/team
_MARKDOWN = re.compile(r"([\\`*_\[\]#!|~])")  # what could start emphasis, a link, an image, a heading
_BACKTICKS = re.compile(r"`+")
ELLIPSIS = "…"


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: str, *, multiline: bool = False) -> str:
    """``text`` with every control character shown as an escape; ``multiline`` keeps newlines and tabs."""
    keep = "\n\t" if multiline else ""
    return _SHOWN.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), str(text))


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` on one terminal line (its own line breaks shown as escapes), cut to ``limit`` characters."""
    shown = for_terminal(text)
    if limit is not None and len(shown) > limit:
        shown = shown[: max(0, limit - 1)] + ELLIPSIS
    return shown


def code_span(text: str, limit: int | None = None) -> str:
    """An inline code span holding ``text`` on one line, whatever backticks it contains; its content
    cut to ``limit`` characters (after escaping) when given."""
    shown = for_terminal(text)
    if limit is not None:
        shown = capped(shown, limit)
    if not shown:
        return ""
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(shown)), default=0) + 1)
    pad = " " if shown[0] in "` " or shown[-1] in "` " else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def code_block(text: str, info: str = "") -> str:
    """A fenced code block holding ``text`` (lines kept), its fence longer than any backtick run inside."""
    shown = for_terminal(text, multiline=True)
    fence = "`" * max(3, max((len(run) for run in _BACKTICKS.findall(shown)), default=0) + 1)
    return f"{fence}{info}\n{shown}\n{fence}"


def plain(text: str, limit: int | None = None) -> str:
    """``text`` as literal Markdown text on one line: no HTML, no link or image, no emphasis, no @-mention;
    cut to ``limit`` characters when given (a cut escape is left as literal text, never markup)."""
    shown = for_terminal(text)
    shown = shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    shown = _MENTION.sub("@" + ZWJ, _MARKDOWN.sub(r"\\\1", shown))
    return shown if limit is None else capped(shown, limit)


def cell(text: str) -> str:
    """A Markdown table cell: ``|`` escaped (GitHub splits cells on it even inside code spans), one line."""
    return for_terminal(text).replace("|", "\\|")


def capped(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + ELLIPSIS
