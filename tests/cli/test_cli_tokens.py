"""Token counting on the command line: `count`, and `compress --encoding`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from skeleton_compressor import TokenCounter
from support.panicking_tiktoken import make_tiktoken_panic
from test_cli import assert_clean_failure, run

TEXT = "x = 1\r\n  \r\ny = 2\r\n# ok\n\nこんにちは 😀\n"


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_count_prints_the_files_token_count(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(TEXT.encode())
    completed = run("count", str(path), "--encoding", encoding)
    assert completed.returncode == 0, completed.stderr
    # The text as it is in the file: \r\n is not read as \n.
    assert completed.stdout == f"{TokenCounter(encoding).count(TEXT)}\n"
    assert TokenCounter(encoding).count(TEXT) != TokenCounter(encoding).count(
        TEXT.replace("\r\n", "\n")
    )


def test_count_reads_standard_input_and_defaults_to_o200k() -> None:
    completed = run("count", "-", stdin=TEXT.replace("\r\n", "\n"))
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == f"{TokenCounter().count(TEXT.replace(chr(13), ''))}\n"


def test_count_leaves_out_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfhello world")
    assert run("count", str(path)).stdout == "2\n"


def test_count_bad_input(tmp_path: Path) -> None:
    assert_clean_failure(run("count", str(tmp_path / "missing.txt")), "cannot read")
    binary = tmp_path / "binary.bin"
    binary.write_bytes(b"\xff\xfe\x00text")
    assert_clean_failure(run("count", str(binary)), "is not UTF-8")
    completed = run("count", "-", "--encoding", "gpt2", stdin="x")
    assert completed.returncode == 2 and "invalid choice: 'gpt2'" in completed.stderr


def test_count_tells_a_missing_file_before_a_counter_it_cannot_make(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SKELETON_COMPRESSOR_BACKEND", "python")
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    missing = tmp_path / "missing.txt"
    assert_clean_failure(run("count", str(missing)), f"cannot read {missing}")
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"ok\nthen \xff")
    completed = run("count", str(binary))
    assert completed.stderr == (
        f"skeleton-compressor: error: {binary} is not UTF-8 (line 2, byte 8)\n"
    )


def test_count_on_the_python_backend_counts_through_tiktoken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SKELETON_COMPRESSOR_BACKEND", "python")
    completed = run("count", "-", stdin=TEXT)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == f"{TokenCounter().count(TEXT)}\n"
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    assert_clean_failure(run("count", "-", stdin="x"), "pip install tiktoken")


def test_a_text_tiktoken_panics_on_is_named_on_the_python_backend(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    make_tiktoken_panic(monkeypatch, on="panic")
    monkeypatch.setenv("SKELETON_COMPRESSOR_BACKEND", "python")
    assert_clean_failure(
        run("count", "-", stdin="panic"),
        "error: standard input: tiktoken cannot count this text (PanicException: "
        "RuntimeError(StackOverflow)); the compiled extension counts it",
    )
    records = jsonl(
        [RECORDS[0], RECORDS[1], {**RECORDS[1], "fragment_id": "p", "content": "panic"}]
    )
    compress = ("compress", "-", "--budget", "10", "--encoding", "o200k_base")
    expected = (
        "error: record 2 on line 3 (id 'p'): tiktoken cannot count this text (PanicException: "
        "RuntimeError(StackOverflow)); the compiled extension counts it"
    )
    assert_clean_failure(run(*compress, stdin=records), expected)
    previous = tmp_path / "prev.jsonl"
    previous.write_text(records)
    with_previous = run(*compress, "--previous", str(previous), stdin=jsonl(RECORDS[:2]))
    assert_clean_failure(with_previous, f"error: previous: {expected[len('error: ') :]}")
    # The whole line: PREV's name once before the record's, the reason once.
    assert with_previous.stderr.endswith(f"error: previous: {expected[len('error: ') :]}\n")


RECORDS = [
    {"fragment_id": "given", "token_count": 5, "relevance_score": 0.9, "content": "ignored"},
    {"fragment_id": "counted", "relevance_score": 0.8, "content": "count these five words"},
    {"fragment_id": "code", "relevance_score": 0.7, "content": TEXT},
]


def jsonl(records: list[dict[str, object]]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_compress_counts_records_without_a_token_count(encoding: str) -> None:
    counter = TokenCounter(encoding)
    counts = [5, counter.count(RECORDS[1]["content"]), counter.count(TEXT)]  # type: ignore[arg-type]
    budget = counts[0] + counts[1]
    completed = run(
        "compress", "-", "--budget", str(budget), "--encoding", encoding, stdin=jsonl(RECORDS)
    )
    assert completed.returncode == 0, completed.stderr
    output = json.loads(completed.stdout)
    # The kept records as they came in; the counts show in the metadata.
    assert output["fragments"] == RECORDS[:2]
    assert output["skeleton_metadata"]["original_tokens"] == sum(counts)
    assert output["skeleton_metadata"]["compressed_tokens"] == budget


def test_compress_without_encoding_still_needs_every_token_count() -> None:
    completed = run("compress", "-", "--budget", "10", stdin=jsonl(RECORDS))
    assert_clean_failure(
        completed, "record 1 on line 2 (id 'counted'): missing field 'token_count'"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "record 1 on line 2 (id 'x'): no token_count, and no content to count it from"),
        (
            7,
            "record 1 on line 2 (id 'x'): content must be a string to count its tokens, "
            "got number 7",
        ),
        (
            [],
            "record 1 on line 2 (id 'x'): content must be a string to count its tokens, got array",
        ),
    ],
)
def test_compress_record_with_nothing_to_count(content: object, message: str) -> None:
    record: dict[str, object] = {"fragment_id": "x", "relevance_score": 0.5}
    if content is not None:
        record["content"] = content
    stdin = jsonl([RECORDS[0], record])
    completed = run("compress", "-", "--budget", "10", "--encoding", "o200k_base", stdin=stdin)
    assert_clean_failure(completed, message)
    # In a JSON array, records have no lines.
    completed = run(
        "compress",
        "-",
        "--budget",
        "10",
        "--encoding",
        "o200k_base",
        stdin=json.dumps([RECORDS[0], record]),
    )
    assert_clean_failure(completed, message.replace(" on line 2", ""))


def compressed_on_python() -> subprocess.CompletedProcess[str]:
    return run(
        "compress",
        "-",
        "--budget",
        "100000",
        "--encoding",
        "o200k_base",
        "--backend",
        "python",
        stdin=jsonl(RECORDS),
    )


def test_compress_encoding_on_the_python_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    completed = compressed_on_python()
    assert completed.returncode == 0, completed.stderr
    rust = run(
        "compress", "-", "--budget", "100000", "--encoding", "o200k_base", stdin=jsonl(RECORDS)
    )
    assert completed.stdout == rust.stdout
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    assert_clean_failure(compressed_on_python(), "pip install tiktoken")


def test_compress_encoding_on_the_python_backend_with_no_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tiktoken = pytest.importorskip("tiktoken")

    def offline(name: str) -> object:
        raise ConnectionError(f"no route to the table of {name}")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    assert_clean_failure(
        compressed_on_python(),
        "tiktoken could not load the table of 'o200k_base' (it downloads it the first time an "
        "encoding is used on a machine): ConnectionError: no route to the table of o200k_base",
    )
