"""Whether a line of Markdown keeps outside text inert, read as CommonMark reads it (code spans apart from
the rest): the check the sanitiser's tests and every renderer's tests of hostile text apply to what they
write."""

from __future__ import annotations

import re

from repro.sanitise import ZWJ

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")
PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


def markdown_pieces(line: str) -> list[tuple[str, str]]:
    """``line`` as CommonMark reads it: ("code", content) for code spans, ("text", text) for the rest,
    backslash escapes kept in the text."""
    pieces: list[tuple[str, str]] = []
    text_start, i = 0, 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line) and line[i + 1] in PUNCTUATION:
            i += 2
            continue
        if line[i] == "`":
            run = line[i : len(line) - len(line[i:].lstrip("`"))]  # the run of backticks at i
            closing = re.compile(f"(?<!`){run}(?!`)").search(line, i + len(run))
            if closing:
                pieces.append(("text", line[text_start:i]))
                pieces.append(("code", line[i + len(run) : closing.start()]))
                i = text_start = closing.end()
                continue
            i += len(run)
            continue
        i += 1
    pieces.append(("text", line[text_start:]))
    return pieces


def assert_inert_markdown(line: str, columns: int | None = None) -> None:
    """No control character anywhere; outside code spans, no HTML, link, image or @-mention; in a table
    row, exactly ``columns`` cells (GitHub splits on every unescaped ``|``, code spans included)."""
    assert not CONTROL.search(line), line
    for kind, piece in markdown_pieces(line):
        if kind == "text":
            unescaped = re.sub(r"\\[!-/:-@\[-`{-~]", "", piece)
            assert "<" not in unescaped and "](" not in unescaped and "![" not in unescaped, line
            assert not MENTION.search(unescaped.replace("@" + ZWJ, "")), line
    if columns is not None:
        assert len(re.findall(r"(?<!\\)\|", line)) == columns + 1, line
