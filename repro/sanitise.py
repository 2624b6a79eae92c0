"""Text from outside (wheels, indexes, pip, PyTorch's sources, GitHub's API) made inert where it is shown.

Applied where text is rendered, never where it is read: the ledger and ``--json`` keep the raw text.
One policy, by Unicode category, for every renderer (the terminal, Markdown documents, release notes,
pull request bodies, step summaries and the pytest summary):

* ``for_terminal``: every character of the categories a reader cannot see or that steer the display
  (control ``Cc``, format ``Cf`` with the bidirectional controls, surrogate ``Cs``, private use
  ``Co``, line and paragraph separators ``Zl``/``Zp``) is shown as a visible escape (``\\x1b``,
  ``\\u202e``, ``\\udc9b``); newline and tab survive only in a block that is meant to span lines
  (``multiline=True``). No surrogate is ever written, so a raw 8-bit byte can never reach the terminal.
* Markdown: ``code_span`` puts the text in a code span whose fence is longer than any backtick run
  inside (HTML, links and @-mentions are inert there); ``code_block`` does the same for a fenced
  block; ``plain`` escapes what Markdown and HTML would act on (emphasis, links, autolinks, bare URLs,
  a leading list or heading marker) and breaks @-mentions with a zero-width joiner, the only format
  character it writes; ``cell`` escapes a table cell's ``|`` and line breaks.
"""

from __future__ import annotations

import re
import unicodedata

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"  # all of category Cf
SEPARATORS = "\u2028\u2029\x85"  # Unicode line and paragraph separators: lines the reader does not see
UNSEEN = ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")  # categories shown as escapes
_ASCII_SHOWN = re.compile("[\x00-\x1f\x7f]")
ZWJ = "\u200d"
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")  # @user, @org/team
_MARKDOWN = re.compile(r"([\\`*_\[\]#!|~])")  # what could start emphasis, a link, an image, a heading
_URL = re.compile(r"(?i)(?<=[a-z0-9])(:)(?=//)|\b(www)(\.)")  # what GitHub's autolinker starts a link at
_LEADING = re.compile(r"^(\s*)(?:([-+=])|(\d{1,9})([.)])(?=\s|$))")  # a list item, a rule, a setext underline
_BACKTICKS = re.compile(r"`+")
# @torch.jit.script_method, @script_method: a GitHub user or team name holds neither a dot nor an underscore
_DECORATOR = re.compile(r"@[A-Za-z_]\w*(?:\.\w+)+|@[A-Za-z0-9]*_\w*")
# and __init__, Module.__new__(), torch/export/__init__.py (a path whole: never half a code span)
_CODE_NAME = re.compile(rf"{_DECORATOR.pattern}|(?<![`\w/.-])(?:\w+[./-])*__\w+__(?:\(\))?(?:[./-]\w+)*")
ELLIPSIS = "…"


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def unseen(char: str) -> bool:
    """A character the policy shows as an escape: one a reader cannot see, or one that steers the display."""
    return unicodedata.category(char) in UNSEEN


def for_terminal(text: str, *, multiline: bool = False) -> str:
    """``text`` with every unseen character (``UNSEEN``) shown as an escape; ``multiline`` keeps newlines
    and tabs."""
    text = str(text)
    keep = "\n\t" if multiline else ""
    if text.isascii():
        return _ASCII_SHOWN.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)
    return "".join(_escape(c) if c not in keep and unseen(c) else c for c in text)


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


def code_names(text: str) -> str:
    """Our own prose for Markdown: its dunder names (``__init__``, which GitHub reads as bold) and dotted
    decorators (``@torch.jit.script_method``, whose ``@torch`` GitHub reads as a mention) as code spans."""
    return _CODE_NAME.sub(lambda m: code_span(m.group()), text)


def plain(text: str, limit: int | None = None) -> str:
    """``text`` as literal Markdown text on one line: no HTML, no link or image, no emphasis, no @-mention;
    cut to ``limit`` characters when given (a cut escape is left as literal text, never markup). A
    decorator (a dot or an underscore in its name) and a dunder name (``__deepcopy__``) are code spans,
    which GitHub shows as written: no mention, no joiner to travel with a copy, no ``\\_\\_`` to read;
    an ``@name`` that could be a user gets the joiner."""
    if limit is None and _CODE_NAME.search(text):
        parts = _CODE_NAME.split(text)
        names = [code_span(name) for name in _CODE_NAME.findall(text)]
        return "".join(plain(part) + name for part, name in zip(parts, [*names, ""]))
    shown = for_terminal(text)
    shown = shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    shown = _MENTION.sub("@" + ZWJ, _MARKDOWN.sub(r"\\\1", shown))
    shown = _URL.sub(lambda m: "\\:" if m.group(1) else "www\\.", shown)  # no bare URL becomes a link
    shown = _LEADING.sub(_escape_marker, shown)
    return shown if limit is None else capped(shown, limit)


def inert_start(line: str) -> str:
    """A line of ``plain`` text, wrapped onto a line of its own, whose leading list, rule or setext
    marker is made literal: ``plain`` escapes one only at the start of its text, and wrapping may put
    one at the start of any line."""
    return _LEADING.sub(_escape_marker, line)


def _escape_marker(match: re.Match[str]) -> str:
    """A leading list, rule or heading marker as literal text."""
    indent, sign, number, end = match.groups()
    return f"{indent}\\{sign}" if sign else f"{indent}{number}\\{end}"


def cell(text: str) -> str:
    """A Markdown table cell of text ``plain`` or ``code_span`` made inert: ``|`` escaped (GitHub splits
    cells on it even inside code spans), one line. Their mention breaker stays as it is: they escaped
    every other one, so a raw one here is this policy's own."""
    return ZWJ.join(for_terminal(part) for part in str(text).split(ZWJ)).replace("|", "\\|")


def capped(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + ELLIPSIS
