"""What token counting costs and where it runs: no table before the first count, no network
ever, the GIL released for long work, every threshold crossed with one answer, and no str
that crashes it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from skeleton_compressor import TokenCounter, _core
from support.sample_text import mixed_texts
from test_resources import counting_during, linux_only

# Strings of a hundred megabytes and millions of characters, memory read from /proc.
pytestmark = pytest.mark.slow


def run_python(script: str, prefix: tuple[str, ...] = ()) -> str:
    completed = subprocess.run(
        [*prefix, sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


@linux_only
def test_tables_load_on_first_count_not_on_import() -> None:
    script = """
        import json
        from pathlib import Path

        def resident_mib():
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024

        seen = {"start": resident_mib()}
        import skeleton_compressor
        from skeleton_compressor import TokenCounter, _core
        counter = TokenCounter()
        seen["imported"] = resident_mib()
        seen["loaded_before"] = _core._loaded_encodings()
        counter.count("the first count loads the table")
        seen["counted"] = resident_mib()
        seen["loaded_after"] = _core._loaded_encodings()
        print(json.dumps(seen))
    """
    seen = json.loads(run_python(script))
    assert seen["loaded_before"] == []
    assert seen["loaded_after"] == ["o200k_base"]
    importing = seen["imported"] - seen["start"]
    loading = seen["counted"] - seen["imported"]
    # o200k_base takes some 60 MiB once loaded; importing the package (and making a counter)
    # costs a small fraction of that.
    assert loading > 30, seen
    assert importing < loading / 3, seen


NO_NETWORK = """
    import socket

    def refused(*args, **kwargs):
        raise OSError("the network is unreachable in this test")

    socket.socket = socket.create_connection = socket.getaddrinfo = refused
    import skeleton_compressor
    from skeleton_compressor import ContextFragment, TokenCounter, fragments_from_texts

    text = "no network needed"
    counts = [TokenCounter(name).count(text) for name in ("o200k_base", "cl100k_base")]
    counts.append(ContextFragment.from_text("a", text, 0.5).token_count)
    counts.append(fragments_from_texts(["b"], [text], [0.5])[0].token_count)
    print(counts)
"""


def test_counting_needs_no_network() -> None:
    # Python's sockets refuse to open.
    assert run_python(NO_NETWORK).strip() == "[3, 3, 3, 3]"


@linux_only
def test_counting_in_a_network_namespace_with_no_network() -> None:
    # A new network namespace has no interface up: nothing outside can be reached, whatever
    # code tries (Rust's own sockets included).
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rn", "true"]).returncode != 0:
        pytest.skip("no unprivileged network namespaces here")
    assert run_python(NO_NETWORK, (unshare, "-rn")).strip() == "[3, 3, 3, 3]"


def test_the_gil_is_released_while_counting_many() -> None:
    counter = TokenCounter()
    texts = mixed_texts(4_000, size=1000, seed=3)
    counter.count_many(texts[:10])
    counted = [counting_during(lambda: counter.count_many(texts)) for _ in range(2)]
    # Holding the GIL, the call would let the counting thread run for about one switch
    # interval (0.5 ms); released, it runs for most of the call (tens of milliseconds).
    assert max(counted) > 0.02, counted


DETACH_FROM, PARALLEL_FROM = _core.COUNT_THRESHOLDS


@pytest.mark.parametrize("total", [DETACH_FROM // 2, DETACH_FROM, PARALLEL_FROM, PARALLEL_FROM * 4])
def test_every_threshold_gives_the_same_counts(total: int) -> None:
    texts = mixed_texts(total // 1000 + 1, size=1000, seed=total)
    for encoding in _core.ENCODINGS:
        counter = TokenCounter(encoding)
        one_by_one = [counter.count(text) for text in texts]
        assert counter.count_many(texts) == one_by_one
        whole = "".join(texts)
        assert counter.count(whole) == counter.count_many([whole])[0]


@pytest.mark.parametrize("encoding", _core.ENCODINGS)
@pytest.mark.parametrize("piece", [" ", "\n", "\t", "\r\n", " \n", "\u3000", "\x0b"])
def test_million_character_whitespace_runs(encoding: str, piece: str) -> None:
    # tiktoken 0.14 panics on a million spaces before a word (its regex's stack overflows).
    counter = TokenCounter(encoding)
    run = piece * (1_000_000 // len(piece))
    for text in (run, run + "x", "x" + run, run + "x" + run):
        count = counter.count(text)
        assert 0 < count <= len(text)


@pytest.mark.parametrize("encoding", _core.ENCODINGS)
def test_a_million_spaces_before_a_word_split_as_fewer_do(encoding: str) -> None:
    # As tiktoken splits them up to the lengths it can count (test_tokens_exact): the run
    # less its last space, then that space with the word.
    counter = TokenCounter(encoding)
    spaces = " " * 1_000_000
    assert counter.count(spaces + "x") == counter.count(spaces[1:]) + counter.count(" x")


def test_a_hundred_megabyte_string() -> None:
    counter = TokenCounter()
    words = 20_000_000
    text = "word " * words  # 100 MB
    # "word", then " word" for every further word, then the last space: one more token per word.
    assert counter.count(text) == counter.count("word " * 1000) + (words - 1000)


@pytest.mark.parametrize("encoding", _core.ENCODINGS)
def test_lone_surrogates_by_the_million(encoding: str) -> None:
    counter = TokenCounter(encoding)
    lone = "\ud800" * 1_000_000
    assert counter.count(lone) == counter.count("\ufffd" * 1_000_000)
    pairs = "\ud83d\ude00" * 500_000
    assert counter.count(pairs) == counter.count("\U0001f600" * 500_000)


def test_the_encoding_tables_are_pinned() -> None:
    # The pre-tokenizer's Unicode classes come from regex-syntax and regex-automata; one
    # locked version of each keeps counts from drifting with a dependency update.
    lock = (Path(__file__).resolve().parents[2] / "Cargo.lock").read_text()
    for crate in ("regex-syntax", "regex-automata", "bpe-openai", "bpe"):
        assert lock.count(f'\nname = "{crate}"\n') == 1, crate
