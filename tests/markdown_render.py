"""Markdown rendered as GitHub renders it (cmark-gfm with GitHub's extensions), for tests that check
that outside text stays inert in a document."""

from __future__ import annotations

import re
import unicodedata
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options

UNSEEN = ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")
ALLOWED_FORMAT = "\u200d"  # the sanitiser's own mention breaker


def render(markdown: str) -> str:
    """GitHub's HTML for ``markdown``, raw HTML kept (as GitHub's sanitiser would then act on it): what the
    text asked for is visible."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


class Tags(HTMLParser):
    """Every start tag in the rendered HTML, with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(markdown: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(render(markdown))
    return parser.tags


LIVE = ("a", "img", "script", "iframe", "b", "h1", "h2", "h3", "h4", "h5", "h6", "li", "blockquote", "hr")


def live(markdown: str, own: tuple[str, ...] = ()) -> list[str]:
    """What outside text could have made live: links, images, raw HTML elements, headings and lists
    (less the tags ``own``, which the document itself uses)."""
    found = []
    for tag, attrs in tags(markdown):
        if tag in LIVE and tag not in own:
            found.append(f"<{tag} {attrs}>")
    return found


def unseen(text: str) -> list[str]:
    """Characters the sanitiser's policy never writes (the mention breaker aside)."""
    return [f"U+{ord(c):04X}" for c in text if c not in ALLOWED_FORMAT + "\n\t" and unicodedata.category(c) in UNSEEN]


def table_widths(markdown: str) -> list[int]:
    """The number of cells of every row of every table GitHub renders."""
    html = render(markdown)
    return [len(re.findall(r"<t[dh][ >]", row)) for row in re.findall(r"<tr>(.*?)</tr>", html, flags=re.S)]


BLOCKS = ("li", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "blockquote", "pre", "ol", "ul", "table")


def blocks(markdown: str) -> dict[str, int]:
    """How many of each block GitHub renders ``markdown`` into (list items, headings, rules, quotes,
    code blocks, tables): compared with what a document made itself, every line of it is checked, not
    only each text's first, where a sanitiser's escape lands."""
    counted = dict.fromkeys(BLOCKS, 0)
    for tag, _ in tags(markdown):
        if tag in counted:
            counted[tag] += 1
    return counted
