"""Outside text made inert where it is rendered (issue 20): the sanitiser itself, and each renderer that
shows text from wheels, indexes, pip or GitHub's API, fed a table of hostile strings."""

from __future__ import annotations

import pytest
from inert_markdown import CONTROL, assert_inert_markdown, markdown_pieces
from markdown_render import live, render, table_widths, unseen

from repro.sanitise import ZWJ, cell, code_block, code_span, for_terminal, one_line, plain
from tracker.summary import markdown, text
from tracker.sweep import Outcome

HOSTILE = {
    "esc": "\x1b[2J\x1b[32mall good\x1b[8m hidden",
    "c1-csi": "\x9b31mred",
    "bell-nul-del": "a\x07b\x00c\x7fd",
    "newline-cr": "line one\r\nline two\rover",
    "bidi": "abc\u202edcba\u2066x\u2069",
    "separators": "one\u2028two\u2029three\x85four",
    "backticks": "a ` b `` c ``` d",
    "backtick-edges": "`starts and ends`",
    "pipes": "a | b || c \\| d",
    "html": "<img src=//e.x/p> <script>alert(1)</script> &amp; <!-- c -->",
    "mention": "@octocat and @pytorch/team, mail a@b.c",
    "link-image": "[x](//e.x) ![i](//e.x/p.png) <https://e.x>",
    "emphasis-heading": "# heading *bold* _it_ ~~s~~",
    "wheel-error": "E('@octocat <img src=//e.x/p> [x](//e.x)')",
    "backslash-escapes": "\\`not code\\` \\<b\\>",
    "surrogate-csi": "\udc9b31mred \ud800",
    "format-private": "in\u200bvis\u2060ible\u00ad \ufeff\ue000\U000f0000 \U000e0041tag",
    "bare-urls": "see https://e.x/p and www.e.x, mail a@b.co",
    "list-heading": "- item",
    "ordered-list": "1. first",
}
# --- the sanitiser ------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_for_terminal_shows_every_control_character_as_an_escape(raw):
    shown = for_terminal(raw)
    assert not CONTROL.search(shown)
    assert for_terminal(raw, multiline=True).count("\n") == raw.count("\n")  # blocks keep their lines
    assert "\\x1b" in for_terminal("\x1b") and "\\x9b" in for_terminal("\x9b") and "\\u202e" in for_terminal("\u202e")
    assert for_terminal("plain text, tab\tkept", multiline=True) == "plain text, tab\tkept"


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_code_span_holds_exactly_the_text(raw):
    span = code_span(raw)
    pieces = markdown_pieces(span)
    assert [kind for kind, _ in pieces] == ["text", "code", "text"] and pieces[0][1] == pieces[2][1] == ""
    content = pieces[1][1]
    if content.startswith(" ") and content.endswith(" ") and content.strip():
        content = content[1:-1]  # CommonMark strips one padding space from each side
    assert content == for_terminal(raw)
    assert_inert_markdown(span)


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_plain_text_and_cells_are_inert(raw):
    assert_inert_markdown(plain(raw))
    assert_inert_markdown("| " + cell(plain(raw)) + " | " + cell(code_span(raw)) + " |", columns=2)


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_code_block_fence_outlasts_any_backtick_run(raw):
    block = code_block(f"{raw}\n```\n````x").splitlines()
    fence = block[0]
    assert set(fence) == {"`"} and block[-1] == fence
    assert [line for line in block[1:-1] if line.startswith(fence)] == []
    assert not CONTROL.search("".join(block))


@pytest.mark.parametrize("limit", [1, 10, 99])
def test_one_line_and_caps_never_exceed_the_limit(limit):
    for raw in HOSTILE.values():
        assert len(one_line(raw * 50, limit)) <= limit and "\n" not in one_line(raw, limit)
        assert len(plain(raw * 50, limit)) <= limit
        assert len(markdown_pieces(code_span(raw * 50, limit))[1][1]) <= limit + 2  # + the padding spaces


def test_mentions_are_broken_with_a_zero_width_joiner_and_html_is_entities():
    assert plain("@octocat <b>&") == f"@{ZWJ}octocat &lt;b&gt;&amp;"
    assert code_span("a`b") == "``a`b``" and code_span("`x") == "`` `x ``" and code_span("") == ""


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_nothing_unseen_is_ever_written(raw):
    """By category: control, format (bidi included), surrogate, private use, line and paragraph separators;
    the mention breaker is the only format character written, and no surrogate at all (a lone surrogate
    written with surrogateescape is a raw 8-bit byte: 0x9b is a C1 CSI)."""
    for shown in (for_terminal(raw), one_line(raw), code_span(raw), plain(raw), cell(raw), code_block(raw)):
        assert unseen(shown) == [], (raw, shown)
        shown.encode("utf-8")  # strict: no surrogate left to encode
    assert for_terminal("\udc9b") == "\\udc9b" and for_terminal("\U000e0041") == "\\U000e0041"


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_plain_text_renders_as_literal_text_with_githubs_parser(raw):
    """cmark-gfm, as GitHub runs it: no link (bare URLs and e-mail addresses included), image, HTML, heading,
    list or quote, at the start of a line or after a paragraph; and a cell keeps its table's shape."""
    for where in (f"{plain(raw)}\n", f"para\n{plain(raw)}\n", f"- {plain(raw)}\n"):
        assert live(where, own=("li",) if where.startswith("- ") else ()) == [], (raw, render(where))
    row = f"| {cell(plain(raw))} | {cell(code_span(raw))} |"
    assert set(table_widths(f"| a | b |\n|---|---|\n{row}\n")) == {2}, render(f"| a | b |\n|---|---|\n{row}\n")


def test_bare_urls_and_leading_markers_are_escaped_as_rules_say():
    """cmark-gfm does not link @-mentions or #123; GitHub does: those stay rule tests."""
    assert plain("https://e.x www.e.x") == "https\\://e.x www\\.e.x"
    assert plain("- a") == "\\- a" and plain("12) b") == "12\\) b" and plain("+ c") == "\\+ c"
    assert plain("#123 @me") == f"\\#123 @{ZWJ}me"


# --- the tracker's summaries --------------------------------------------------------------------


def hostile_outcome(raw: str) -> tuple[Outcome, dict]:
    """One release whose dynamic detail (what pip or the reproducer said) and error are ``raw``."""
    bugs = {
        "full-backward-hook-flag": {
            "static": {"verdict": "present", "evidence": [raw]},
            "dynamic": {"verdict": "cannot-test", "detail": raw},
        }
    }
    entry = {"probe": {"bytes_fetched": 10, "requests": 1, "wheel_size": 100}, "bugs": bugs}
    ledger = {"bugs": {"full-backward-hook-flag": {"fixed_in": None}}, "releases": {}}
    return Outcome({"2.13.0": entry}, [f"2.13.0: {raw}"]), ledger


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_terminal_summary_shows_no_control_character(raw):
    outcome, ledger = hostile_outcome(raw)
    shown = text(outcome, ledger, [])
    assert not CONTROL.search(shown.replace("\n", ""))
    own = [line for line in shown.splitlines() if not line.startswith(" ")]  # indented: evidence, wrapped lines
    assert len(own) == 6  # head, one row, blank, fixed_in, status, one error: no injected line
    assert max(len(line) for line in shown.splitlines()) <= 100


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_step_summary_is_inert_markdown(raw):
    outcome, ledger = hostile_outcome(raw)
    lines = markdown(outcome, ledger, []).splitlines()
    rows = [line for line in lines if line.startswith("| 2.13.0")]
    assert len(rows) == 1 and len(lines) == 9
    for line in lines:
        assert_inert_markdown(line, columns=7 if line.startswith("| 2.13.0") else None)


# --- the issue body (python -m repro --markdown) ------------------------------------------------


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_issue_body_keeps_what_torch_printed_inert(raw):
    """What the wheel's torch raised and printed, its collect_env and its sources: fenced or escaped."""
    from results import report_of, result

    from helpers import A_BUG
    from repro.catalogue import get
    from repro.filing.material import Filing
    from repro.formats import Material, ReportFormat, render

    scenario = "register_full_backward_hook: called with grad_input and grad_output"
    report = report_of([result(scenario, "plain_forward", "raises", f"{raw}: {raw}")])
    printed = f"Traceback:\n{raw}\n```\n<img src=//e.x/p>\n````"
    filing = Filing(get(A_BUG), printed, 1, f"collect_env {raw}\n```", f"+{raw}\n```")
    body = render(ReportFormat.MARKDOWN, report, Material({A_BUG: None}, filing))
    lines, fence = body.splitlines(), None
    for line in lines:  # outside fenced blocks, every line inert; inside, nothing closes the fence early
        if fence is None and line.startswith("```"):
            fence = line[: len(line) - len(line.lstrip("`"))]
        elif fence is not None:
            assert not CONTROL.search(line)
            if line == fence:
                fence = None
            else:
                assert not line.startswith(fence), line
        elif not line.startswith(("<details>", "<summary>", "</details>")):
            assert_inert_markdown(line, columns=7 if line.startswith(f"| {scenario.split(':')[0]} |") else None)
    assert fence is None


def test_our_code_names_are_code_spans_not_bold_or_mentions():
    """Issue 46: __init__ rendered bold, and @script_method carried a zero-width joiner into every copy."""
    import cmarkgfm

    from repro.sanitise import ZWJ, code_names, plain

    assert code_names("after __init__, Module.__new__() and @torch.jit.script_method") == (
        "after `__init__`, `Module.__new__()` and `@torch.jit.script_method`"
    )
    assert plain("with @script_method, by @someone") == f"with `@script_method`, by @{ZWJ}someone"
    html = cmarkgfm.github_flavored_markdown_to_html(code_names("hooked in __init__ with @torch.jit.script_method"))
    assert "<strong>" not in html and "<code>__init__</code>" in html


def test_plain_writes_dunder_names_as_code_spans_not_escapes():
    """Root-cause steps read `\\_\\_deepcopy\\_\\_` on GitHub's page source and in every copy; a code span
    is as inert and reads as written."""
    said = plain("torch/jit/_script.py:553: ScriptModule has no __deepcopy__; Module.__new__() runs")
    assert said == "torch/jit/\\_script.py:553: ScriptModule has no `__deepcopy__`; `Module.__new__()` runs"
    # a path holding one is one code span, never half of one: torch/export/`__init__`.py read oddly
    assert plain("torch/export/__init__.py:149 raises") == "`torch/export/__init__.py`:149 raises"
