"""The anchor extractor and the look-ups of anchors in a text, against their plain definitions.

``engine.anchors`` writes its patterns so the regular expression engine backtracks less (a
keyword's word boundary as a look-behind, possessive runs) and looks anchors up in UTF-8 bytes
when that gives the same answer: these tests hold each of those to the plain reading it
replaces, on generated texts full of the characters where they could go wrong (case rules,
Unicode whitespace, words that are keywords, paths and names at the ends of a text)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_compactor.engine import anchors

PLAIN_PATH = re.compile(
    r"(?<![\w/.-])((?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}|[\w-]+\.(?:py|ts|tsx|js|"
    r"jsx|rs|go|md|json|jsonl|toml|yaml|yml|c|h|cpp|java|rb|sh|css|html|sql|txt|lock))(?![\w/])"
)
PLAIN_DEFINITION = re.compile(
    r"\b(?:def|class|function|fn|func|interface|struct|enum|type)\s+([A-Za-z_]\w{2,})"
)
PLAIN_BARE = re.compile(
    r"(?<![\w./-])([a-z_][a-z0-9]*_[a-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]+)"
    r"(?![\w/-])"
)
"""The patterns as first written: what a path, a defined name and a bare name are."""

PIECES = [
    "class", "def", "function", "func", "fn", "type", "enum", "struct", "interface", "myclass",
    " ", "  ", "\n", "\t", "\u00a0", "\x1c", "\u2028", "\u3000", "foo", "Bar", "load_all",
    "checkForNew", "HTTPServer", "x", "_", "/", ".", "./", "../", "~/", "src/a.py", "a.b",
    "file.ts", "x.lock", ".md", "-", "`", "`a.b()`", "http://", "é", "ß", "日本", "🚀", "İ", "K",
    "K", "k", "i", "Σ", "ς", "\u0307", "npm", "test", "--", "2>&1", "|", "-50", "1", "22", "(",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)


def _unique(values: list[str]) -> list[str]:
    return [value for value in dict.fromkeys(values) if value]


@settings(max_examples=3000, deadline=None)
@given(texts)
def test_the_scans_find_what_the_plain_patterns_find(text: str) -> None:
    """Paths, bare names and defined names are exactly the plain patterns' matches, in
    order."""
    assert anchors.mentioned_paths(text) == _unique(
        [path for path in PLAIN_PATH.findall(text) if "://" not in path]
    )
    assert anchors.request_names(text) == _unique(PLAIN_BARE.findall(text))
    assert anchors.defined_names(text) == _unique(PLAIN_DEFINITION.findall(text))


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.lists(st.sampled_from([*PIECES, "\x00", "class def", "func\x00"]), max_size=16)
                .map("".join), max_size=8))  # fmt: skip
def test_defined_names_of_many_texts_are_each_texts_own(batch: list[str]) -> None:
    """Texts read together (one scan per keyword over them joined) give each text's own
    defined names, in order: no match reaches from one text into the next, a keyword at a
    text's start counts, and two keywords' overlapping matches (``class def foo``) are read
    as the joint pattern reads them."""
    assert anchors.defined_names_each(batch) == [anchors.defined_names(text) for text in batch]


def test_defined_names_of_many_texts_overlapping_keywords() -> None:
    """The joint pattern's reading where one keyword's match covers another's start: the
    first match wins and the covered one is not a match (``class def foo``: ``def``)."""
    batch = ["class def foo", "def class bar fn baz", "x\x00class Foo", "", "type struct S"]
    assert anchors.defined_names_each(batch) == [["def"], ["class", "baz"], ["Foo"], [], ["struct"]]
    assert anchors.defined_names_each(batch) == [anchors.defined_names(text) for text in batch]


def test_paths_and_names_are_read_from_the_words_that_can_hold_them() -> None:
    """Paths and the user's bare names are looked for only in the words that can hold one
    (a ".", an "_" or a capital): whatever whitespace stands between words, each is found
    as in the whole text, and a word beside one is not taken for part of it."""
    text = (
        "see\u3000src/a.py\u2028and ~/b.md,\x1cload_all\tx.y.z checkForNew\u00a0"
        "(c.ts) dir/ e.lock- HTTPServer\nv2.0.1 _x_ a-b_c"
    )
    assert anchors.mentioned_paths(text) == _unique(
        [path for path in PLAIN_PATH.findall(text) if "://" not in path]
    )
    assert anchors.mentioned_paths(text) == ["src/a.py", "c.ts", "e.lock"]
    assert anchors.request_names(text) == _unique(PLAIN_BARE.findall(text))
    assert anchors.request_names(text) == ["load_all", "checkForNew"]


def test_bytes_whitespace_is_the_texts_whitespace() -> None:
    """The UTF-8 whitespace pattern matches a character exactly when ``\\s`` does."""
    space = re.compile(anchors._BYTES_SPACE)
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        assert bool(space.fullmatch(char.encode())) == char.isspace(), hex(code)


@settings(max_examples=3000, deadline=None)
@given(st.lists(texts, min_size=1, max_size=4), st.lists(texts, min_size=1, max_size=6))
def test_a_haystack_answers_as_the_normalized_text(parts: list[str], needles: list[str]) -> None:
    """Whatever the order of look-ups (a haystack keeps what it worked out), a needle is found
    exactly when it occurs in the normalized text, for a text and for the same text given
    in parts."""
    text = "\n".join(parts)
    whole = anchors.Haystack(text)
    joined = anchors.Haystack.joined(list(parts))
    expected_text = anchors.normalize(text)
    for needle in needles:
        needle = anchors.normalize(needle) if needle.strip() else needle
        if not needle:
            continue
        expected = needle in expected_text
        assert whole.contains(needle) == expected, needle
        assert joined.contains(needle) == expected, needle


def test_spaced_needles_are_tried_only_where_their_first_two_words_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A command is looked up at the places where its first two words follow each other:
    a window full of ``npm WARN`` lines answers the absent ``npm test -- ...`` commands
    without trying them anywhere, and still finds the one that is there, across a line
    break, a run of spaces and a wide space."""
    tried: list[int] = []
    follow = anchors._words_follow

    def counted(text: bytes, at: int, words: list[bytes]) -> bool:
        tried.append(at)
        return follow(text, at, words)

    monkeypatch.setattr(anchors, "_words_follow", counted)
    lines = [f"npm WARN pkg{i}@1.0.{i} requires a peer of x{i}" for i in range(300)]
    lines.append("npm test -- branch\n   2>&1 |\u3000tail -50")
    haystack = anchors.Haystack.joined(lines)
    absent = [f"npm tset -- q{i}zz 2>&1 | tail -50" for i in range(50)]
    assert not any(haystack.contains(needle) for needle in absent)
    assert not tried
    assert haystack.contains("npm test -- branch 2>&1 | tail -50")
    assert tried
    assert not haystack.contains("npm test -- branch 2>&1 | tail -51")
    assert haystack.contains("npm test")
    assert not haystack.contains("npm warn pkg1@1.0.1 requires a peer of x2")


def test_a_lower_case_text_is_told_to_hold_no_camel_case_without_a_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The user's bare names: a text with no capital letter (the usual prompt) is answered
    without searching it for camel case; a text whose only capitals are those of a camel-case
    name, or which has capitals only outside ASCII, is still searched and the name found."""
    searched: list[str] = []
    camel = anchors._CAMEL

    class Counted:
        def search(self, text: str) -> re.Match[str] | None:
            searched.append(text)
            return camel.search(text)

    monkeypatch.setattr(anchors, "_CAMEL", Counted())
    assert anchors.request_names("please look at the cache again, é and ß too") == []
    assert anchors.request_names("日本 123 -- ok") == []
    assert searched == []
    assert anchors.request_names("call checkForNewVersion before the release") == [
        "checkForNewVersion"
    ]
    assert anchors.request_names("Émile asked about parseConfig") == ["parseConfig"]
    assert anchors.request_names("İ k FooBar") == ["FooBar"]
    assert anchors.request_names("Nothing Here") == []
    assert len(searched) == 4


def test_the_files_an_assistant_message_read_come_with_its_uses() -> None:
    """``message_uses`` hands over the files the agent's read calls named, in order (what the
    hindsight audit keeps as re-read candidates), without a second pass over the calls: not
    those of other tools, not a URL, not a user's message's."""
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Reading src/a.py first."},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "src/a.py"}},
            {"type": "toolCall", "id": "c2", "name": "edit", "arguments": {"path": "src/b.py"}},
            {"type": "toolCall", "id": "c3", "name": "read", "arguments": {"file_path": "c.md"}},
            {
                "type": "toolCall",
                "id": "c4",
                "name": "read",
                "arguments": {"path": "https://x.io/a"},
            },
            {"type": "toolCall", "id": "c5", "name": "bash", "arguments": {"command": "ls  -la"}},
        ],
    }
    reads: list[str] = []
    uses = anchors.message_uses(message, reads)
    assert reads == ["src/a.py", "c.md"]
    assert uses == [
        ("path", ["src/a.py"]),
        ("path", ["src/a.py"]),
        ("path", ["src/b.py"]),
        ("path", ["c.md"]),
        ("command", ["ls -la"]),
    ]
    user_reads: list[str] = []
    anchors.message_uses({"role": "user", "content": "read src/a.py"}, user_reads)
    assert user_reads == []
