"""`compress` on files as users write them: every form, every bad input a one-line error
(the same on both backends), and the kept records written back byte for byte. Standard input
from a real pipe is read by `python -m skeleton_compressor` in a process of its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli_runner import run_cli

BACKENDS = ["rust", "python"]
PROG = "skeleton-compressor: error: "


def run(
    *args: str,
    stdin: bytes = b"",
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    return run_cli(*args, stdin=stdin, env=env, cwd=cwd)


def run_piped(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    """The command as a process of its own, `python -m skeleton_compressor`, reading standard
    input from a pipe."""
    return subprocess.run(
        [sys.executable, "-m", "skeleton_compressor", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
    )


def compress(path: Path, backend: str, *extra: str) -> subprocess.CompletedProcess[bytes]:
    return run("compress", str(path), "--budget", "100", "--backend", backend, *extra)


def record(fragment_id: str, tokens: object = 10, score: object = 0.5, **more: object) -> str:
    fields = {"fragment_id": fragment_id, "token_count": tokens, "relevance_score": score}
    return json.dumps({**fields, **more})


GOOD = record("a")
DEEP = "[" * 257 + "]" * 257

# (input, the one line on stderr after "skeleton-compressor: error: ")
BAD_INPUTS: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "IN has no records (an empty set of records is written [])"),
    "blank lines": (b"\n  \n\t\r\n", "IN has no records (an empty set of records is written [])"),
    "only a byte order mark": (
        b"\xef\xbb\xbf",
        "IN has no records (an empty set of records is written [])",
    ),
    "invalid utf-8": (
        f"{GOOD}\n".encode() + b'{"fragment_id": "\xff"}\n',
        f"IN is not UTF-8 (line 2, byte {len(GOOD) + 18})",
    ),
    "a surrogate in utf-8": (
        b"[" + b'{"fragment_id": "\xed\xa0\x80"}]',
        "IN is not UTF-8 (line 1, byte 18)",
    ),
    "NaN": (
        f"[{GOOD},\n{record('b', score=float('nan'))}]".encode(),
        "malformed JSON at line 2: NaN is not standard JSON",
    ),
    "Infinity in a line": (
        f"{GOOD}\n{record('b', score=float('inf'))}\n".encode(),
        "malformed JSON at line 2: Infinity is not standard JSON",
    ),
    "missing comma in an array": (
        f"[{GOOD}\n{GOOD}]".encode(),
        "malformed JSON at line 2: Expecting ',' delimiter",
    ),
    "trailing comma in an array": (f"[{GOOD},\n]".encode(), "malformed JSON at line 2"),
    "unclosed array": (f"[{GOOD},".encode(), "malformed JSON at line 1"),
    "text after the array": (f"[{GOOD}]\n]".encode(), "malformed JSON at line 2: Extra data"),
    "bad line": (f"{GOOD}\n\n{{oops}}\n".encode(), "malformed JSON at line 3"),
    "two records on a line": (
        f"{GOOD}\n{GOOD} {GOOD}\n".encode(),
        "malformed JSON at line 2: Extra data",
    ),
    "nested too deeply": (
        f'[{GOOD},\n{{"fragment_id": "b", "x": {DEEP}}}]'.encode(),
        "malformed JSON at line 2: values nested too deeply to read",
    ),
    # The depth limit holds for every value in the text, a repeated key's dropped one too.
    "nested too deeply in a repeated key's first value, in a line": (
        f'{record("b", tokens="x")}\n{{"fragment_id": "a", "x": {DEEP}, "x": 1}}\n'.encode(),
        "malformed JSON at line 2: values nested too deeply to read",
    ),
    "nested too deeply in a repeated key's first value, in an array": (
        f'[{GOOD},\n{{"fragment_id": "a", "x": {{"y": {DEEP}, "y": 1}}, "x": 1}}]'.encode(),
        "malformed JSON at line 2: values nested too deeply to read",
    ),
    "nested too deeply in a repeated key's first value, beside the fragments": (
        f'{{"fragments": [{GOOD}],\n"other": {{"x": {DEEP}, "x": 1}}}}'.encode(),
        "malformed JSON at line 2: values nested too deeply to read",
    ),
    "fragments twice": (
        f'{{"fragments": [{GOOD}],\n"fragments": []}}'.encode(),
        'malformed JSON at line 2: "fragments" is given twice',
    ),
    "fragments not an array": (
        b'{"fragments": {"a": 1}}',
        "fragments must be an array of records, got object",
    ),
    "a record that is not an object": (
        f"{GOOD}\n[1, 2]\n".encode(),
        "record 1 on line 2: expected a JSON object, got array",
    ),
    "a record that is a number": (b"[1]", "record 0: expected a JSON object, got number"),
    "missing field": (
        b'{"fragment_id": "a", "relevance_score": 0.5}\n',
        "record 0 on line 1 (id 'a'): missing field 'token_count'",
    ),
    "missing id": (
        b'[{"token_count": 1, "relevance_score": 0.5}]',
        "record 0: missing field 'fragment_id'",
    ),
    "id of the wrong type": (
        record(None).encode(),  # type: ignore[arg-type]
        "record 0 on line 1: fragment_id must be a string, got null",
    ),
    "empty id": (record("").encode(), "record 0 on line 1 (id ''): fragment_id must be non-empty"),
    "token count a string": (
        record("a", "10").encode(),
        "record 0 on line 1 (id 'a'): token_count must be an integer, got string",
    ),
    "token count a fraction": (
        record("a", 1.5).encode(),
        "record 0 on line 1 (id 'a'): token_count must be an integer, got number 1.5",
    ),
    "token count written with an exponent": (
        b'{"fragment_id": "a", "token_count": 1E1, "relevance_score": 0.5}',
        "record 0 on line 1 (id 'a'): token_count must be an integer, got number 10.0",
    ),
    "token count a boolean": (
        record("a", True).encode(),
        "record 0 on line 1 (id 'a'): token_count must be an integer, got boolean",
    ),
    "negative token count": (
        record("a", -4).encode(),
        "record 0 on line 1 (id 'a'): token_count must be >= 0, got -4",
    ),
    "token count past 2**63 - 1": (
        record("a", 2**63).encode(),
        "record 0 on line 1 (id 'a'): token_count must be <= 2**63 - 1, got 9223372036854775808",
    ),
    "a 5000-digit token count": (
        ('{"fragment_id": "a", "token_count": ' + "7" * 5000 + ', "relevance_score": 1}').encode(),
        "record 0 on line 1 (id 'a'): token_count must be <= 2**63 - 1, "
        "got an integer of 5000 digits",
    ),
    "a negative 5000-digit token count": (
        (
            '[{"fragment_id": "a", "token_count": -' + "7" * 5000 + ', "relevance_score": 1}]'
        ).encode(),
        "record 0 (id 'a'): token_count must be >= 0, got a negative integer of 5000 digits",
    ),
    "relevance an object": (
        record("a", 1, {}).encode(),
        "record 0 on line 1 (id 'a'): relevance_score must be a number, got object",
    ),
    "relevance out of range": (
        record("a", 1, 2).encode(),
        "record 0 on line 1 (id 'a'): relevance_score must be in [0, 1], got 2",
    ),
    "relevance past a float": (
        b'[{"fragment_id": "a", "token_count": 1, "relevance_score": 1e400}]',
        "record 0 (id 'a'): relevance_score must be in [0, 1], got inf",
    ),
    "required a number": (
        record("a", required=1).encode(),
        "record 0 on line 1 (id 'a'): required must be true or false, got number 1",
    ),
    "group a list": (
        record("a", group=["g"]).encode(),
        "record 0 on line 1 (id 'a'): group must be null or a string, got array",
    ),
    "empty group": (
        record("a", group="").encode(),
        "record 0 on line 1 (id 'a'): group must be non-empty",
    ),
    "duplicate ids": (
        f"{GOOD}\n{record('b')}\n\n{GOOD}\n".encode(),
        "duplicate fragment_id 'a' at record 0 on line 1 and record 2 on line 4",
    ),
    "the first problem in the file": (
        f"{record('a', -1)}\n{record('b', 'x')}\n".encode(),
        "record 0 on line 1 (id 'a'): token_count must be >= 0, got -1",
    ),
    "malformed JSON before any record's problem": (
        f"{record('a', -1)}\n{{\n".encode(),
        "malformed JSON at line 2",
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_line_naming_the_problem(tmp_path: Path, case: str, backend: str) -> None:
    data, message = BAD_INPUTS[case]
    path = tmp_path / "IN"
    path.write_bytes(data)
    completed = run("compress", "IN", "--budget", "100", "--backend", backend, cwd=tmp_path)
    assert completed.returncode == 1, completed
    assert completed.stdout == b""
    stderr = completed.stderr.decode()
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert stderr.startswith(PROG + message), stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_standard_input_reads_as_files_do(backend: str) -> None:
    data = b"\xef\xbb\xbf" + f"{GOOD}\n".encode()
    completed = run_piped("compress", "-", "--budget", "100", "--backend", backend, stdin=data)
    assert completed.returncode == 0, completed
    assert json.loads(completed.stdout)["fragments"] == [json.loads(GOOD)]
    completed = run_piped("compress", "-", "--budget", "100", "--backend", backend, stdin=b"[\xff]")
    assert completed.returncode == 1
    assert completed.stderr == (PROG + "standard input is not UTF-8 (line 1, byte 1)\n").encode()


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_array_is_an_empty_set(tmp_path: Path, backend: str) -> None:
    for text in ("[]", " \n[ ]\n", '{"fragments": []}'):
        path = tmp_path / "in.json"
        path.write_text(text)
        completed = compress(path, backend)
        assert completed.returncode == 0, completed
        output = json.loads(completed.stdout)
        assert output["fragments"] == []
        assert output["skeleton_metadata"]["fragments_total"] == 0


# Records as people write them: odd spacing, escapes, non-ASCII, keys in any order, repeats.
ODD_RECORDS = [
    '{ "fragment_id" : "src/a.py#chunk-1" ,"token_count":40, "relevance_score" : 0.90 }',
    '{"relevance_score": 8e-1, "token_count": 30, "fragment_id": "caf\\u00e9 \\"quoted\\""}',
    '{"fragment_id": "\\ud800 lone", "token_count": 20, "relevance_score": 0.7,'
    ' "x": [1, {"y": []}]}',
    '{"fragment_id": "日本語", "token_count": 25, "relevance_score": 0.75, "content": "naïve"}',
    '{"fragment_id": "dup-key", "token_count": -1, "token_count": 5, "relevance_score": 1}',
    '{"fragment_id": "zero", "token_count": 0, "relevance_score": -0.0, "required": false}',
    '{"fragment_id": "g1", "token_count": 10, "relevance_score": 0.2, "group": "tool"}',
    '{"fragment_id": "g2", "token_count": 10, "relevance_score": 0.95, "group": "tool"}',
]
FORMS = {
    "array": lambda records: "[\n  " + ",\n  ".join(records) + "\n]\n",
    "lines": lambda records: "\r\n".join(records) + "\r\n",
    "wrapped": lambda records: '{"fragments": [' + ", ".join(records) + '], "other": {"k": [1]}}',
    "bom": lambda records: "\ufeff" + "\n\n".join(records),
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("budget", ["0", "55", "100", "1000"])
def test_kept_records_are_written_back_byte_for_byte(
    tmp_path: Path, form: str, budget: str
) -> None:
    path = tmp_path / "in.json"
    path.write_bytes(FORMS[form](ODD_RECORDS).encode())
    outputs = {}
    for backend in BACKENDS:
        completed = run("compress", str(path), "--budget", budget, "--backend", backend)
        assert completed.returncode == 0, completed
        outputs[backend] = completed.stdout
    assert outputs["rust"] == outputs["python"]
    output = json.loads(outputs["rust"])
    kept_text = outputs["rust"].decode()
    for kept in output["fragments"]:
        original = next(r for r in ODD_RECORDS if json.loads(r) == kept)
        assert original in kept_text
    assert output["skeleton_metadata"]["fragments_total"] == len(ODD_RECORDS)
    assert (
        output["skeleton_metadata"]["compressed_tokens"] <= max(int(budget), 0)
        or (output["skeleton_metadata"]["over_budget"])
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_output_compresses_again_for_a_grandchild(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(ODD_RECORDS))
    child = compress(path, backend, "--explain")
    assert child.returncode == 0, child
    (tmp_path / "child.json").write_bytes(child.stdout)
    grandchild = run(
        "compress", str(tmp_path / "child.json"), "--budget", "50", "--backend", backend
    )
    assert grandchild.returncode == 0, grandchild
    kept = json.loads(grandchild.stdout)["fragments"]
    assert kept
    child_kept = json.loads(child.stdout)["fragments"]
    assert all(fragment in child_kept for fragment in kept)
    assert json.loads(grandchild.stdout)["skeleton_metadata"]["fragments_total"] == len(child_kept)


@pytest.mark.parametrize("backend", BACKENDS)
def test_explain_names_every_record(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(ODD_RECORDS))
    completed = compress(path, backend, "--explain", "--min-relevance", "0.5")
    assert completed.returncode == 0, completed
    decisions = json.loads(completed.stdout)["decisions"]
    assert set(decisions) == {json.loads(r)["fragment_id"] for r in ODD_RECORDS}
    assert decisions["zero"]["reason"] == "below_min_relevance"


def test_explain_is_the_same_on_both_backends(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(ODD_RECORDS))
    rust, python = (compress(path, backend, "--explain") for backend in BACKENDS)
    assert rust.returncode == 0 and rust.stdout == python.stdout


@pytest.mark.parametrize("value", ["fast", "RUST", "1"])
def test_a_bad_backend_variable_is_bad_usage_in_one_line(tmp_path: Path, value: str) -> None:
    path = tmp_path / "in.json"
    path.write_text(GOOD)
    completed = run(
        "compress", str(path), "--budget", "5", env={"SKELETON_COMPRESSOR_BACKEND": value}
    )
    assert completed.returncode == 2
    assert completed.stderr.decode() == (
        PROG + f"SKELETON_COMPRESSOR_BACKEND must be one of auto, rust, python, got {value!r}\n"
    )
    assert run("demo", env={"SKELETON_COMPRESSOR_BACKEND": value}).returncode == 2
    # count has no --backend, but chooses its counter by the variable.
    counted = run("count", "-", stdin=b"x", env={"SKELETON_COMPRESSOR_BACKEND": value})
    assert (counted.returncode, counted.stderr) == (2, completed.stderr)


def test_help_describes_the_input_and_every_option() -> None:
    completed = run("compress", "--help")
    assert completed.returncode == 0
    text = completed.stdout.decode()
    for option in (
        "--budget",
        "--strategy",
        "--backend",
        "--min-relevance",
        "--on-overflow",
        "--order",
        "--explain",
        "--encoding",
    ):
        assert option in text
    for words in (
        "JSON Lines",
        "byte order mark",
        '"fragments"',
        "exit status",
        "NaN",
        "variant_of",
    ):
        assert words in " ".join(text.split()), words


def test_record_problems_are_named_alike_in_rust_and_python() -> None:
    from skeleton_compressor import _core
    from skeleton_compressor._records import errors as record_errors

    whole_input = {"duplicate", "malformed", "not_json", "fragments_not_array", "no_records"}
    whole_input |= {"not_utf8"}
    whole_input |= {"variant_group_mismatch", "variant_required_twice"}
    named_in_python = set(record_errors.KINDS) - whole_input - {"too_many", "changed"}
    assert set(_core.RECORD_PROBLEMS) == named_in_python


class _Trickle:
    """A raw stream that takes at most seven bytes a call, as raw streams may."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, chunk: bytes) -> int:
        self.data += bytes(chunk[:7])
        return min(len(chunk), 7)


def test_kept_records_reach_a_stream_that_takes_little_at_a_time() -> None:
    from skeleton_compressor import _core

    data = "\n".join(ODD_RECORDS).encode()
    kept = _core.Compressor("greedy").compress_records(data, 1000)[0]
    out = _Trickle()
    kept.write_to(out)
    assert len(out.data) == len(kept)
    assert sorted(map(json.dumps, json.loads(out.data))) == sorted(
        json.dumps(json.loads(record)) for record in ODD_RECORDS
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_directory_is_not_an_input(tmp_path: Path, backend: str) -> None:
    completed = run("compress", str(tmp_path), "--budget", "5", "--backend", backend)
    assert completed.returncode == 1
    assert completed.stderr.decode() == PROG + f"cannot read {tmp_path}: Is a directory\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_file_that_cannot_be_opened_says_why_in_one_way(tmp_path: Path, backend: str) -> None:
    missing = tmp_path / "missing.jsonl"
    completed = run("compress", str(missing), "--budget", "5", "--backend", backend)
    assert completed.returncode == 1
    assert completed.stderr.decode() == (
        PROG + f"cannot read {missing}: No such file or directory\n"
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_object_whose_first_key_comes_late_is_still_read_as_one(
    tmp_path: Path, backend: str
) -> None:
    # The key "fragments" starts past the first 8 MiB chunk of the file.
    inner = record("inner", 1, 0.5)
    outer = (
        f'"fragments": [{inner}], "fragment_id": "outer", "token_count": 2, "relevance_score": 1'
    )
    path = tmp_path / "late.json"
    path.write_text("{" + " " * (8 << 20) + outer + "}\n")
    completed = run("compress", str(path), "--budget", "10", "--backend", backend)
    assert completed.returncode == 0, completed
    assert json.loads(completed.stdout)["fragments"] == [json.loads(inner)]


@pytest.mark.parametrize("split", [1, 7, 64])
def test_json_lines_split_a_piece_at_a_time_read_as_split_whole(
    split: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skeleton_compressor._records import reader as json_records

    lines = [record(f"id{n}", n, 0.5, content="x" * (n % 13)) for n in range(40)]
    data = ("\n".join(lines[:20]) + "\n\n  \n" + "\n".join(lines[20:]) + "\n").encode()
    whole = json_records.read_records(data)
    monkeypatch.setattr(json_records, "_SPLIT_CHARACTERS", split)
    assert json_records.read_records(data) == whole
    assert json_records.read_records(data, resume=data.index(b"\n") + 1)[2:] == (
        whole.spans[1:],
        whole.values[1:],
        whole.lines[1:] if whole.lines else None,
    )
    # A record cut in two by where a piece ends is still one line to the reader.
    with pytest.raises(json_records.RecordsError):
        json_records.read_records(data + b'{"fragment_id": "z",\n"token_count": 1}\n')
