"""TokenCounter, ContextFragment.from_text and fragments_from_texts: what they take, what they
return, and their errors, on both backends (the Python one counts with callables only)."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import skeleton_compressor
from skeleton_compressor import (
    ContextFragment,
    FragmentError,
    TokenCounter,
    _core,
    compress,
    fragments_from_texts,
    tokens,
    validate_fragments,
)
from skeleton_compressor._backends.choice import ENVIRONMENT_VARIABLE
from skeleton_compressor._encodings import TiktokenFailure, check_encoding
from skeleton_compressor._tiktoken_counter import TiktokenCounter
from skeleton_compressor.tokens import built_in
from support.panicking_tiktoken import make_tiktoken_panic

TEXTS = ["def f(x):\n    return x * 2\n", "Съешь же ещё этих булок", "", "😀 ok", "a\ud800b"]


@pytest.fixture
def counting_backend(backend: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The backend `auto` means, for counters given by name."""
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, backend)
    return backend


def words(text: str) -> int:
    return len(text.split())


def test_the_encodings_are_the_extensions() -> None:
    assert tokens.ENCODINGS == _core.ENCODINGS == ("o200k_base", "cl100k_base")
    assert tokens.DEFAULT_ENCODING == TokenCounter().encoding == "o200k_base"
    assert skeleton_compressor.TokenCounter is _core.TokenCounter


def test_token_counter() -> None:
    o200k, cl100k = TokenCounter(), TokenCounter("cl100k_base")
    assert (o200k.encoding, cl100k.encoding) == ("o200k_base", "cl100k_base")
    assert repr(cl100k) == "TokenCounter('cl100k_base')"
    assert o200k.count("") == 0
    assert o200k.count("hello world") == 2
    russian = "Съешь же ещё этих мягких французских булок"
    assert o200k.count(russian) < cl100k.count(russian)  # o200k has more non-English tokens
    assert o200k.count_many(TEXTS) == [o200k.count(text) for text in TEXTS]
    assert o200k.count_many([]) == []
    assert o200k.count_many(iter(TEXTS)) == o200k.count_many(tuple(TEXTS))
    restored = pickle.loads(pickle.dumps(cl100k))
    assert (type(restored), restored.encoding) == (TokenCounter, "cl100k_base")


def test_str_subclasses_count_as_the_text_they_hold() -> None:
    class Text(str):
        def __str__(self) -> str:
            return "something else entirely"

    counter = TokenCounter()
    assert counter.count(Text("hello world")) == 2
    assert counter.count_many([Text("hello world")]) == [2]
    assert TokenCounter(Text("cl100k_base")).encoding == "cl100k_base"


@pytest.mark.parametrize(
    "name", ["gpt2", "", "O200K_BASE", "o200k_base ", "p50k_base", "o200k_base\ud800"]
)
def test_unknown_encodings_name_the_known_ones(name: str) -> None:
    expected = f"unknown encoding {name!r}; known encodings: o200k_base, cl100k_base"
    with pytest.raises(ValueError) as compiled:
        TokenCounter(name)
    assert str(compiled.value) == expected
    for make in (
        lambda: ContextFragment.from_text("a", "text", 0.5, counter=name),
        lambda: fragments_from_texts(["a"], ["text"], [0.5], counter=name),
    ):
        with pytest.raises(ValueError) as caught:
            make()
        assert str(caught.value) == expected


def test_non_str_texts_are_type_errors_naming_their_place() -> None:
    counter = TokenCounter()
    with pytest.raises(TypeError, match=r"^text must be a str, got b'x' \(bytes\)$"):
        counter.count(b"x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^texts\[2\] must be a str, got None \(NoneType\)$"):
        counter.count_many(["a", "b", None, 5])  # type: ignore[list-item]
    for texts in ("a string", 5, None):
        with pytest.raises(TypeError, match="texts must be an iterable of str"):
            counter.count_many(texts)  # type: ignore[arg-type]
    # Worded as the stand-in (the extension missing) and `counter=5` word it.
    for encoding in (5, b"o200k_base", None):
        expected = f"encoding must be a str, got {encoding!r} ({type(encoding).__name__})"
        with pytest.raises(TypeError) as compiled:
            TokenCounter(encoding)  # type: ignore[arg-type]
        with pytest.raises(TypeError) as stand_in:
            check_encoding(encoding)
        assert str(compiled.value) == str(stand_in.value) == expected


def test_an_iterable_that_raises_passes_its_error_on() -> None:
    def texts() -> Any:
        yield "fine"
        raise KeyError("from the iterable")

    with pytest.raises(KeyError, match="from the iterable"):
        TokenCounter().count_many(texts())

    class Texts:
        def __iter__(self) -> Any:
            raise RuntimeError("from __iter__")  # not a TypeError: passed on as it is

    for counter in (TokenCounter(), TiktokenCounter("o200k_base")):
        with pytest.raises(RuntimeError, match="from __iter__"):
            counter.count_many(Texts())  # type: ignore[arg-type]


COUNTERS: dict[str, Callable[[], Any]] = {
    "default": lambda: None,
    "name": lambda: "cl100k_base",
    "TokenCounter": lambda: TokenCounter("cl100k_base"),
}


@pytest.mark.parametrize("how", COUNTERS)
def test_fragments_from_text_with_a_built_in_encoding(how: str, counting_backend: str) -> None:
    counter = COUNTERS[how]()
    expected = TokenCounter(counter if isinstance(counter, str) else "o200k_base")
    if isinstance(counter, TokenCounter):
        expected = counter
    fragment = ContextFragment.from_text("doc", TEXTS[0], 0.75, counter=counter)
    assert fragment == ContextFragment("doc", expected.count(TEXTS[0]), 0.75, TEXTS[0])
    ids = [f"t{i}" for i in range(len(TEXTS))]
    scores = [0.1 * i for i in range(len(TEXTS))]
    made = fragments_from_texts(ids, TEXTS, scores, counter=counter)
    assert made == tuple(
        ContextFragment(i, n, s, t)
        for i, n, s, t in zip(ids, expected.count_many(TEXTS), scores, TEXTS)
    )


def test_callables_count_on_both_backends(counting_backend: str) -> None:
    fragment = ContextFragment.from_text("a", "three short words", 0.5, counter=words)
    assert fragment == ContextFragment("a", 3, 0.5, "three short words")
    made = fragments_from_texts(iter(["a", "b"]), ("x y", "z"), [0.5, 1], counter=words)
    assert made == (ContextFragment("a", 2, 0.5, "x y"), ContextFragment("b", 1, 1, "z"))
    result = compress(made, 2, backend=counting_backend)
    assert [f.fragment_id for f in result.fragments] == ["b"]


def test_a_numpy_count_is_read_as_the_int_it_holds() -> None:
    fragment = ContextFragment.from_text("a", "x", 0.5, counter=lambda text: np.int64(7))
    assert fragment.token_count == 7 and type(fragment.token_count) is int


def bad_token_count_error(fragment_id: Any, count: object) -> FragmentError:
    with pytest.raises(FragmentError) as caught:
        validate_fragments((ContextFragment(fragment_id, count, 0.5),))  # type: ignore[arg-type]
    return caught.value


@pytest.mark.parametrize("count", [-1, 2**63, 1.5, "3", True, None, np.float64(2.0)])
def test_a_bad_count_from_a_callable_is_a_bad_token_count(count: object) -> None:
    expected = bad_token_count_error("a", count)
    with pytest.raises(FragmentError) as caught:
        ContextFragment.from_text("a", "text", 0.5, counter=lambda text: count)
    assert type(caught.value) is type(expected)
    assert (str(caught.value), caught.value.kind) == (str(expected), expected.kind)

    # Among many, named by its index (and id), as compress names fragments[i].
    counts = {"x": 1, "y": 2, "z": count}
    with pytest.raises(FragmentError) as caught:
        fragments_from_texts(["a", "b", "c"], ["x", "y", "z"], [0.5] * 3, counter=counts.get)  # type: ignore[arg-type]
    first, third = "fragments[0] (id 'a')", "fragments[2] (id 'c')"
    assert str(caught.value) == str(expected).replace(first, third)
    assert (caught.value.index, caught.value.fragment_id) == (2, "c")


def test_a_bad_count_of_a_fragment_without_a_valid_id_is_named_by_index() -> None:
    with pytest.raises(FragmentError) as caught:
        fragments_from_texts(["ok", ""], ["x", "y"], [0.5, 0.5], counter=lambda text: -1)
    assert str(caught.value) == "fragments[0] (id 'ok'): token_count must be >= 0, got -1"
    with pytest.raises(FragmentError) as caught:
        ContextFragment.from_text(7, "x", 0.5, counter=lambda text: -1)  # type: ignore[arg-type]
    assert str(caught.value) == "fragments[0]: token_count must be >= 0, got -1"


def test_an_error_in_the_callable_passes_through() -> None:
    def broken(text: str) -> int:
        raise RuntimeError("tokenizer down")

    with pytest.raises(RuntimeError, match="tokenizer down"):
        fragments_from_texts(["a"], ["x"], [0.5], counter=broken)


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match=r"^content must be a str, got 5 \(int\)$"):
        ContextFragment.from_text("a", 5, 0.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^contents\[1\] must be a str, got b'y' \(bytes\)$"):
        fragments_from_texts(["a", "b"], ["x", b"y"], [0.5, 0.5], counter=words)  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"must have one length, got 2, 1 and 2$"):
        fragments_from_texts(["a", "b"], ["x"], [0.5, 0.5])
    for counter in (5, b"o200k_base", ["o200k_base"]):
        with pytest.raises(TypeError, match="counter must be a TokenCounter, an encoding name"):
            ContextFragment.from_text("a", "x", 0.5, counter=counter)  # type: ignore[arg-type]


def test_nothing_but_what_is_used_is_checked() -> None:
    # As ContextFragment(...) itself: ids and scores are for compress to check.
    fragment = ContextFragment.from_text("", "x y", 7.5, counter=words)
    assert fragment == ContextFragment("", 2, 7.5, "x y")


def test_fragments_from_no_texts() -> None:
    assert fragments_from_texts([], [], []) == ()


def test_a_built_in_encoding_on_the_python_backend_counts_through_tiktoken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "python")
    for name in ("o200k_base", "cl100k_base"):
        counter = built_in(name)
        assert type(counter) is TiktokenCounter and counter.encoding == name
        assert counter.count_many(TEXTS) == TokenCounter(name).count_many(TEXTS)
        assert pickle.loads(pickle.dumps(counter)).count(TEXTS[0]) == counter.count(TEXTS[0])
        with pytest.raises(TypeError, match=r"^texts\[1\] must be a str, got 3 \(int\)$"):
            counter.count_many(["a", 3])  # type: ignore[list-item]
        with pytest.raises(TypeError, match=r"^texts must be an iterable of str"):
            counter.count_many("abc")
        with pytest.raises(TypeError, match=r"^text must be a str, got b'x' \(bytes\)$"):
            counter.count(b"x")  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    with pytest.raises(ImportError, match=r"needs the compiled extension.*pip install tiktoken"):
        ContextFragment.from_text("a", "x", 0.5)


def test_the_python_backend_counts_a_str_subclass_as_the_text_it_holds() -> None:
    class Text(str):
        def encode(self, *args: Any, **kwargs: Any) -> bytes:
            return b"x" * 100

    text = Text("a\ud800b")  # a lone surrogate: tiktoken encodes such a str itself
    counter = TiktokenCounter("o200k_base")
    expected = TokenCounter().count(text)
    assert (counter.count(text), counter.count_many([text])) == (expected, [expected])


def test_a_text_tiktoken_panics_on_is_this_librarys_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A BaseException, which no `except Exception` stops.
    make_tiktoken_panic(monkeypatch)
    counter = TiktokenCounter("cl100k_base")
    with pytest.raises(TiktokenFailure) as raised:
        counter.count("x")
    assert str(raised.value) == (
        "text: tiktoken cannot count this text (PanicException: RuntimeError(StackOverflow)); "
        "the compiled extension counts it"
    )
    with pytest.raises(TiktokenFailure, match=r"^texts\[0\]: tiktoken cannot count this text"):
        counter.count_many(["x"])


@pytest.mark.parametrize(
    "failure",
    [ConnectionError("no network"), ValueError("Hash mismatch for data downloaded")],
    ids=["no network", "hash mismatch"],
)
def test_tiktoken_failing_to_load_a_table_is_an_import_error(
    monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    tiktoken = pytest.importorskip("tiktoken")

    def failing(name: str) -> object:
        raise failure

    monkeypatch.setattr(tiktoken, "get_encoding", failing)
    with pytest.raises(ImportError) as raised:
        TiktokenCounter("cl100k_base")
    assert str(raised.value) == (
        "tiktoken could not load the table of 'cl100k_base' (it downloads it the first time an "
        f"encoding is used on a machine): {type(failure).__name__}: {failure}; the compiled "
        "extension counts it without the network"
    )
    assert raised.value.__cause__ is failure


def test_without_the_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "skeleton_compressor._core", None)
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    assert ContextFragment.from_text("a", TEXTS[0], 0.5).token_count == TokenCounter().count(
        TEXTS[0]
    )
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    with pytest.raises(ImportError, match="needs the compiled extension"):
        ContextFragment.from_text("a", "x", 0.5)
    assert ContextFragment.from_text("a", "x y", 0.5, counter=words).token_count == 2
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "rust")
    with pytest.raises(ImportError, match="maturin develop"):
        fragments_from_texts(["a"], ["x"], [0.5], counter="o200k_base")


def test_token_counter_stands_in_where_the_extension_is_missing() -> None:
    # A fresh interpreter, in which the extension cannot be imported.
    script = textwrap.dedent(
        r"""
        import pickle, sys
        import tiktoken, tiktoken.registry
        sys.modules["skeleton_compressor._core"] = None
        from skeleton_compressor import TokenCounter, ContextFragment
        # A small encoding under the built-in's name, for tiktoken to find without the
        # network: one token per byte, words split apart.
        tiktoken.registry.ENCODINGS["o200k_base"] = tiktoken.Encoding(
            name="o200k_base",
            pat_str=r"\S+|\s+",
            mergeable_ranks={bytes([byte]): byte for byte in range(256)},
            special_tokens={},
        )
        counter = TokenCounter("o200k_base")
        print(counter, counter.count("ab c"), counter.count_many(["x", "yz"]))
        print(pickle.loads(pickle.dumps(counter)))
        sys.modules["tiktoken"] = None
        for name in ("cl100k_base", "gpt2"):
            try:
                TokenCounter(name)
            except (ImportError, ValueError) as error:
                print(type(error).__name__, error)
        print(ContextFragment.from_text("a", "x y z", 0.5, counter=lambda t: len(t.split())))
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0] == "TokenCounter('o200k_base') 4 [1, 2]"
    assert lines[1] == "TokenCounter('o200k_base')"
    assert lines[2].startswith("ImportError the built-in encoding 'cl100k_base' needs the compiled")
    assert lines[3].startswith("ValueError unknown encoding 'gpt2'; known encodings:")
    assert lines[4] == repr(ContextFragment("a", 3, 0.5, "x y z"))
