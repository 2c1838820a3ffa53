"""Token counts are tiktoken's, exactly: `TokenCounter.count` against tiktoken's own
`len(encode_ordinary(text))`, built offline from the same (published) tables, on text from
all of Unicode, code, prose in many scripts, emoji, long runs, special-token strings and
surrogates, for both encodings.
"""

from __future__ import annotations

import hashlib
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skeleton_compressor import TokenCounter, _core
from support.offline_tiktoken import published, reference_count, table_file
from support.sample_text import EMOJI, PROSE, mixed_texts, text_of_kind

EXAMPLES = int(os.environ.get("DIFFERENTIAL_EXAMPLES", "400"))
ENCODINGS = _core.ENCODINGS
COUNTERS = {encoding: TokenCounter(encoding) for encoding in ENCODINGS}


@pytest.fixture(params=ENCODINGS)
def encoding(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def assert_counts_match(encoding: str, texts: list[str]) -> None:
    ours = COUNTERS[encoding].count_many(texts)
    for text, count in zip(texts, ours):
        expected = reference_count(encoding, text)
        assert count == expected, (encoding, text[:200])
    assert [COUNTERS[encoding].count(text) for text in texts] == ours


def test_tables_are_the_published_files(encoding: str) -> None:
    # The SHA-256 that tiktoken's own constructor expects of the file it downloads.
    tiktoken_encoding, digest = published(encoding)
    assert hashlib.sha256(table_file(encoding)).hexdigest() == digest
    assert tiktoken_encoding.name == encoding
    assert len(tiktoken_encoding._mergeable_ranks) == len(_core._encoding_tokens(encoding))


# Every code point alone, between letters, and doubled after a space and before a digit; in
# blocks of 256 consecutive code points, each block one text.
TEMPLATES = ("{c}", "a{c}b ", " {c}{c}1")


@pytest.mark.slow
@pytest.mark.parametrize("template", TEMPLATES)
def test_every_code_point(encoding: str, template: str) -> None:
    blocks = [
        "".join(template.format(c=chr(point)) for point in range(start, start + 256))
        for start in range(0, 0x110000, 256)
    ]
    ours = COUNTERS[encoding].count_many(blocks)
    tiktoken_encoding = published(encoding)[0]
    wrong = [
        (hex(start * 256), count, len(tiktoken_encoding.encode_ordinary(block)))
        for start, (block, count) in enumerate(zip(blocks, ours))
        if count != len(tiktoken_encoding.encode_ordinary(block))
    ]
    assert not wrong, wrong[:10]


any_text = st.text(st.one_of(st.characters(), st.characters(categories=["Cs"])))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(any_text, max_size=5))
def test_any_text(texts: list[str]) -> None:
    for encoding in ENCODINGS:
        assert_counts_match(encoding, texts)


SPECIAL_TOKENS = sorted(
    {token for encoding in ENCODINGS for token in published(encoding)[0].special_tokens_set}
)
# Pieces whose joins stress the pre-tokenizer: contractions in any case, CR/LF mixes,
# whitespace of several kinds before words and punctuation, digits next to letters.
PIECES = [
    *SPECIAL_TOKENS,
    *EMOJI,
    "'s",
    "'S",
    "'ll",
    "'LL",
    "'Re",
    "'t",
    "'d",
    "'m",
    "'ve",
    "\r\n",
    "\r",
    "\n",
    "\t",
    " ",
    "  ",
    "\u00a0",
    "\u3000",
    "\u2028",
    "\x0b",
    "\x0c",
    "\x85",
    "...",
    "!?",
    "/",
    "//",
    "#",
    "0",
    "123",
    "4567",
    "3.14159",
    "1e-9",
    "\u0301",
    "\u200d",
    "\ufe0f",
    "\U0001f3fb",
    "\ud83d",
    "\ude00",
    "\ud800",
    "\udfff",
    "ǅ",
    "Σ",
    "ß",
    "İ",
    "ﬁ",
]
words = st.one_of(
    st.sampled_from(PIECES),
    st.sampled_from([word for text in PROSE.values() for word in text.split()]),
    st.builds(
        lambda kind, seed, size: text_of_kind(kind, random.Random(seed), size),
        st.sampled_from(["prose", "code", "log", "emoji"]),
        st.integers(0, 2**32),
        st.integers(1, 200),
    ),
    any_text,
)
runs = st.builds(
    lambda piece, length: piece * length,
    st.sampled_from(
        [" ", "\n", "\t", "\r\n", " \n", "\n ", "0", "9", "a", "A", "!", "\u3000", "😀"]
    ),
    st.integers(1, 3000),
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.one_of(words, runs), max_size=12))
def test_joined_pieces(parts: list[str]) -> None:
    for encoding in ENCODINGS:
        assert_counts_match(encoding, ["".join(parts), " ".join(parts)])


def test_mixed_texts_of_every_kind(encoding: str) -> None:
    texts = mixed_texts(300, size=1000, seed=7)
    rng = random.Random(11)
    texts += [text_of_kind(kind, rng, 3000) for kind in ("prose", "code", "log", "emoji")]
    texts += [" ".join(PROSE.values()), "\n\n".join(PROSE.values())]
    assert_counts_match(encoding, texts)


@pytest.mark.parametrize("length", [1, 2, 3, 15, 16, 17, 127, 128, 129, 1000, 4095, 20_000])
def test_long_runs(encoding: str, length: int) -> None:
    texts = []
    for piece in (" ", "\n", "\t", "\r\n", " \n", "0", "12", "a", "Ab", "!", ".", "\u3000", "é"):
        run = piece * length
        texts += [run, run + "x", "x" + run, run + " x", run + "\n", "word" + run + "word"]
    assert_counts_match(encoding, texts)


def test_special_token_strings_count_as_ordinary_text(encoding: str) -> None:
    texts = [
        *SPECIAL_TOKENS,
        "".join(SPECIAL_TOKENS),
        " ".join(SPECIAL_TOKENS),
        "text<|endoftext|>more text",
        "<|endoftext|" + ">",
        "<|endofprompt|> <|fim_prefix|>x<|fim_middle|>y<|fim_suffix|>",
    ]
    assert_counts_match(encoding, texts)
    # As ordinary text, never one special token.
    assert all(COUNTERS[encoding].count(token) > 1 for token in SPECIAL_TOKENS)


SURROGATE_TEXTS = [
    "\ud800",
    "\udfff",
    "a\ud800b",
    "\ud83d\ude00",  # a valid pair: one emoji to tiktoken
    "\ude00\ud83d",  # reversed: two lone surrogates
    "\ud800\ud800\udc00",
    "\ud83d\ude00\ud83d",
    "x" * 1000 + "\udc00",
    "\ufeff\ud800\ufeff",
    "hello \ud800 world \U0001f600 \udbff\udfff",
    "\ud800" * 3000,
]


def test_surrogates(encoding: str) -> None:
    assert_counts_match(encoding, SURROGATE_TEXTS)
    counter = COUNTERS[encoding]
    # The pair counts as the emoji it stands for, a lone surrogate as U+FFFD.
    assert counter.count("\ud83d\ude00") == counter.count("\U0001f600")
    assert counter.count("a\ud800b") == counter.count("a\ufffdb")


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.characters(categories=["Cs"]),
            st.sampled_from(["a", " ", "😀", "\ufffd", "\ufeff", "1"]),
        ),
        max_size=20,
    )
)
def test_generated_surrogates(characters: list[str]) -> None:
    text = "".join(characters)
    for encoding in ENCODINGS:
        assert_counts_match(encoding, [text])
