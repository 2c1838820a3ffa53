"""`compress FILE --previous PREV`: the leading run of an earlier output that FILE still has is
kept first, as the library keeps it (docs/turns.md), and written as FILE has it, byte for
byte; PREV's problems are one line naming it; `reused_tokens` is in every output's metadata.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import skeleton_compressor
from skeleton_compressor import ContextFragment
from support.cli_runner import CLOSED, run_cli

PROG = "skeleton-compressor: error: "


def run(
    *args: str, stdin: bytes = b"", cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    return run_cli(*args, stdin=stdin, cwd=cwd)


def compress(
    path: Path | str, budget: int, backend: str, *extra: str, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    return run(
        "compress", str(path), "--budget", str(budget), "--backend", backend, *extra, stdin=stdin
    )


def record(fragment_id: str, tokens: object = 10, score: object = 0.5, **more: object) -> str:
    fields = {"fragment_id": fragment_id, "token_count": tokens, "relevance_score": score}
    return json.dumps({**fields, **more})


def content_of(number: str) -> str:
    """a's record with 30 tokens and `number`, as written, for its content."""
    return f'{{"fragment_id": "a", "token_count": 30, "relevance_score": 0.5, "content": {number}}}'


def lines(*records: str) -> bytes:
    return ("\n".join(records) + "\n").encode()


def kept_ids(completed: subprocess.CompletedProcess[bytes]) -> list[str]:
    assert completed.returncode == 0, completed
    return [kept["fragment_id"] for kept in json.loads(completed.stdout)["fragments"]]


def metadata(completed: subprocess.CompletedProcess[bytes]) -> dict[str, object]:
    assert completed.returncode == 0, completed
    found: dict[str, object] = json.loads(completed.stdout)["skeleton_metadata"]
    return found


def failure(completed: subprocess.CompletedProcess[bytes], status: int = 1) -> str:
    """The one line on stderr of a command that failed with `status`."""
    assert completed.returncode == status, completed
    assert completed.stdout == b""
    stderr = completed.stderr.decode()
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    return stderr


# The first turn: a budget of 100 keeps a, b and c (90 tokens).
FIRST = [
    record("a", 30, 0.9, content="alpha"),
    record("b", 40, 0.8, content="beta"),
    record("c", 20, 0.7),
    record("d", 50, 0.3),
    record("e", 60, 0.2, content="epsilon"),
]
# The next turn: a's relevance fell and f arrived, worth more than a; b's keys are in
# another order (its record is written as this turn has it).
SECOND = [
    record("a", 30, 0.4, content="alpha"),
    '{"fragment_id": "b", "relevance_score": 0.8,  "token_count": 40, "content": "beta"}',
    record("c", 20, 0.7),
    record("d", 50, 0.3),
    record("e", 60, 0.2, content="epsilon"),
    record("f", 30, 0.6, note="new"),
]


def first_output(tmp_path: Path, backend: str) -> Path:
    """The first turn's output, as a file."""
    path = tmp_path / "first.jsonl"
    path.write_bytes(lines(*FIRST))
    completed = compress(path, 100, backend, "--order", "input")
    assert kept_ids(completed) == ["a", "b", "c"]
    output = tmp_path / "first.json"
    output.write_bytes(completed.stdout)
    return output


def second_input(tmp_path: Path) -> Path:
    path = tmp_path / "second.jsonl"
    path.write_bytes(lines(*SECOND))
    return path


def test_the_previous_output_is_kept_first_when_the_value_allows(
    tmp_path: Path, backend: str
) -> None:
    previous, second = first_output(tmp_path, backend), second_input(tmp_path)
    # Afresh, f, b and c (0.6 + 0.8 + 0.7 = 2.1) beat a, b and c (1.9): 0.2 of 2.1 is lost
    # keeping a, b and c, less than 10%.
    completed = compress(
        second,
        100,
        backend,
        "--order",
        "input",
        "--previous",
        str(previous),
        "--max-value-loss",
        "0.1",
    )
    assert kept_ids(completed) == ["a", "b", "c"]
    assert metadata(completed)["reused_tokens"] == 90
    assert completed.stdout.startswith(
        b'{"fragments": [' + ", ".join(SECOND[:3]).encode() + b'], "skeleton_metadata": '
    )


def test_a_run_that_loses_too_much_value_is_not_kept_and_headroom_leaves_room(
    tmp_path: Path, backend: str
) -> None:
    previous, second = first_output(tmp_path, backend), second_input(tmp_path)
    afresh = compress(second, 100, backend, "--order", "input")
    assert kept_ids(afresh) == ["b", "c", "f"]
    reusing = ["--order", "input", "--previous", str(previous), "--max-value-loss", "0.05"]
    completed = compress(second, 100, backend, *reusing)
    assert completed.stdout == afresh.stdout
    # The cached prompt breaks anyway: 30 tokens of the 100 are left free, and b and c fill
    # the 70.
    roomy = compress(second, 100, backend, *reusing, "--headroom", "0.3")
    assert kept_ids(roomy) == ["b", "c"]
    assert metadata(roomy)["compressed_tokens"] == 60
    assert metadata(roomy)["reused_tokens"] == 0


def test_an_unchanged_input_reuses_its_whole_output(tmp_path: Path, backend: str) -> None:
    previous = first_output(tmp_path, backend)
    for order in ("ranking", "input", "edges"):
        completed = compress(
            tmp_path / "first.jsonl", 100, backend, "--order", order, "--previous", str(previous)
        )
        assert kept_ids(completed) == ["a", "b", "c"]
        assert metadata(completed)["reused_tokens"] == 90


def test_explain_gives_the_reused_records_their_reason(tmp_path: Path, backend: str) -> None:
    previous, second = first_output(tmp_path, backend), second_input(tmp_path)
    completed = compress(
        second, 100, backend, "--previous", str(previous), "--max-value-loss", "0.1", "--explain"
    )
    decisions = json.loads(completed.stdout)["decisions"]
    assert decisions == {
        "a": {"kept": True, "reason": "reused", "rank": 3, "budget_left": None},
        "b": {"kept": True, "reason": "reused", "rank": 0, "budget_left": None},
        "c": {"kept": True, "reason": "reused", "rank": 1, "budget_left": None},
        "d": {"kept": False, "reason": "no_room", "rank": 4, "budget_left": 10},
        "e": {"kept": False, "reason": "no_room", "rank": 5, "budget_left": 10},
        "f": {"kept": False, "reason": "no_room", "rank": 2, "budget_left": 10},
    }
    plain = compress(second, 100, backend, "--previous", str(previous), "--max-value-loss", "0.1")
    assert completed.stdout.startswith(plain.stdout[: -len(b"}\n")] + b', "decisions": ')


# PREV's records in every form the reader takes: what it kept is read alike.
PREVIOUS_FORMS = {
    "output": lambda kept: '{"fragments": [' + ", ".join(kept) + '], "skeleton_metadata": {}}',
    "explained output": lambda kept: (
        '{"fragments": [' + ", ".join(kept) + '], "skeleton_metadata": {"x": [1]},\n'
        '"decisions": {"a": {"kept": true}}}'
    ),
    "array": lambda kept: "[\n  " + ",\n  ".join(kept) + "\n]\n",
    "lines": lambda kept: "\r\n".join(kept) + "\r\n",
    "lines after a byte order mark": lambda kept: "\ufeff\n" + "\n\n".join(kept),
}


@pytest.mark.parametrize("form", sorted(PREVIOUS_FORMS))
def test_every_form_of_previous_reads_alike(tmp_path: Path, backend: str, form: str) -> None:
    previous = tmp_path / "previous"
    previous.write_text(PREVIOUS_FORMS[form](FIRST[:3]), encoding="utf-8")
    completed = compress(
        second_input(tmp_path),
        100,
        backend,
        "--previous",
        str(previous),
        "--max-value-loss",
        "0.1",
    )
    assert kept_ids(completed) == ["a", "b", "c"]
    assert metadata(completed)["reused_tokens"] == 90


# (a's record in this turn's input, a's record in PREV, whether it is the same fragment)
SAME_OR_NOT = {
    "another relevance": (record("a", 30, 0.4), record("a", 30, 0.9), True),
    "no relevance in PREV": (record("a", 30, 0.4), '{"fragment_id": "a", "token_count": 30}', True),
    "content absent and empty": (record("a", 30, content=""), record("a", 30), True),
    "content escaped otherwise": (
        '{"fragment_id": "a", "token_count": 30, "relevance_score": 0.5, "content": "caf\\u00e9"}',
        record("a", 30, content="caf\u00e9"),
        True,
    ),
    "content changed": (record("a", 30, content="alpha"), record("a", 30, content="alpha!"), False),
    "content gone": (record("a", 30), record("a", 30, content="alpha"), False),
    "token count changed": (record("a", 30), record("a", 31), False),
    "id changed": (record("a", 30), record("A", 30), False),
    "objects with their keys in another order": (
        record("a", 30, content={"x": 1, "y": [1, "z"]}),
        record("a", 30, content={"y": [1.0, "z"], "x": 1}),
        True,
    ),
    "true is not 1": (record("a", 30, content=True), record("a", 30, content=1), False),
    "null is not absent": (record("a", 30, content=None), record("a", 30), False),
    "a string is not an array": (record("a", 30, content="[]"), record("a", 30, content=[]), False),
    "a string in an array is not a number": (
        record("a", 30, content=["1"]),
        record("a", 30, content=[1]),
        False,
    ),
    # Numbers by their exact value, not as floats: both of these are an infinite float.
    "numbers past a float's range": (content_of("1e400"), content_of("1e401"), False),
    "a long integer written with a fraction": (
        content_of("12345678901234567890123"),
        content_of("12345678901234567890123.0"),
        True,
    ),
    "an integer longer than the reader converts, written with a fraction": (
        content_of("7" * 4100),
        content_of("7" * 4100 + ".0"),
        True,
    ),
    "two numbers one float apart": (content_of("0.1"), content_of("0.10000000000000001"), False),
    "exponents past any float's": (
        content_of("1e1000000000000000000"),
        content_of("10e999999999999999999"),
        True,
    ),
    "exponents past any float's, one apart": (
        content_of("1e1000000000000000000"),
        content_of("1e1000000000000000001"),
        False,
    ),
    "a float content beside another field past a float's range": (
        content_of('[1.5], "note": 1e1000000000000000000'),
        content_of("[1.50]"),
        True,
    ),
}


@pytest.mark.parametrize("case", sorted(SAME_OR_NOT))
def test_the_same_fragment_has_the_same_id_token_count_and_content(
    tmp_path: Path, backend: str, case: str
) -> None:
    current, sent, same = SAME_OR_NOT[case]
    path = tmp_path / "in.jsonl"
    path.write_bytes(lines(record("b", 20, 0.9), current))
    previous = tmp_path / "previous.jsonl"
    previous.write_bytes(lines(sent, record("b", 20, 0.1)))
    completed = compress(path, 100, backend, "--previous", str(previous))
    # Without reuse, b (the more relevant) comes first.
    assert kept_ids(completed) == (["a", "b"] if same else ["b", "a"])
    assert metadata(completed)["reused_tokens"] == (50 if same else 0)


def test_the_run_ends_at_the_first_record_this_input_lacks(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(lines(record("a", 10, 0.1), record("b", 10, 0.2), record("c", 10, 0.3)))
    previous = tmp_path / "previous.jsonl"
    for sent, reused in (
        (["a", "gone", "b"], ["a"]),
        (["a", "b", "a", "c"], ["a", "b"]),  # a repeated record ends the run too
        (["gone", "a"], []),
    ):
        previous.write_bytes(lines(*[record(name, 10) for name in sent]))
        completed = compress(path, 100, backend, "--previous", str(previous))
        assert kept_ids(completed)[: len(reused)] == reused
        assert metadata(completed)["reused_tokens"] == 10 * len(reused)


@pytest.mark.parametrize("empty", ["[]", '{"fragments": []}', " [ ]\n"])
def test_an_empty_previous_changes_nothing_but_the_path(
    tmp_path: Path, backend: str, empty: str
) -> None:
    path = second_input(tmp_path)
    previous = tmp_path / "previous.json"
    previous.write_text(empty)
    for extra in ([], ["--explain"], ["--strategy", "optimal", "--order", "edges"]):
        afresh = compress(path, 100, backend, *extra)
        completed = compress(path, 100, backend, *extra, "--previous", str(previous))
        assert completed.returncode == 0, completed
        assert completed.stdout == afresh.stdout


def test_either_input_may_be_standard_input(tmp_path: Path, backend: str) -> None:
    previous, second = first_output(tmp_path, backend), second_input(tmp_path)
    reusing = ("--max-value-loss", "0.1")
    expected = compress(second, 100, backend, "--previous", str(previous), *reusing)
    assert kept_ids(expected) == ["a", "b", "c"]
    from_pipe = compress(
        second, 100, backend, "--previous", "-", *reusing, stdin=previous.read_bytes()
    )
    assert from_pipe.stdout == expected.stdout
    piped = compress(
        "-", 100, backend, "--previous", str(previous), *reusing, stdin=second.read_bytes()
    )
    assert piped.stdout == expected.stdout


def test_both_inputs_on_standard_input_is_bad_usage(backend: str) -> None:
    completed = compress("-", 100, backend, "--previous", "-", stdin=lines(*FIRST))
    assert failure(completed, 2) == (
        "skeleton-compressor compress: error: FILE and --previous cannot both be standard "
        "input (-) (see --help)\n"
    )


@pytest.mark.parametrize("option", ["--max-value-loss", "--headroom"])
@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("x", "not a number: 'x'"),
        ("", "not a number: ''"),
        ("1", "must be in [0, 1), got 1"),
        ("1.0", "must be in [0, 1), got 1.0"),
        ("-0.1", "must be in [0, 1), got -0.1"),
        ("nan", "must be in [0, 1), got nan"),
        ("inf", "must be in [0, 1), got inf"),
    ],
)
def test_a_share_outside_zero_to_one_is_bad_usage(
    tmp_path: Path, backend: str, option: str, value: str, problem: str
) -> None:
    previous = first_output(tmp_path, backend)
    completed = compress(
        second_input(tmp_path), 100, backend, "--previous", str(previous), f"{option}={value}"
    )
    assert failure(completed, 2) == (
        f"skeleton-compressor compress: error: argument {option}: {problem} (see --help)\n"
    )


@pytest.mark.parametrize("value", ["0", "-0", "0.999", "1e-3", " 0.5 "])
def test_a_share_in_zero_to_one_is_taken(tmp_path: Path, backend: str, value: str) -> None:
    previous = first_output(tmp_path, backend)
    for option in ("--max-value-loss", "--headroom"):
        completed = compress(
            second_input(tmp_path), 100, backend, "--previous", str(previous), f"{option}={value}"
        )
        assert completed.returncode == 0, completed


def test_shares_without_previous_change_nothing(tmp_path: Path, backend: str) -> None:
    path = second_input(tmp_path)
    afresh = compress(path, 100, backend)
    completed = compress(path, 100, backend, "--max-value-loss", "0.5", "--headroom", "0.5")
    assert completed.stdout == afresh.stdout


# (PREV's bytes, the one line on stderr after "skeleton-compressor: error: "); PREV is the
# file `PREV` in the working directory.
BAD_PREVIOUS: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "previous: PREV has no records (an empty set of records is written [])"),
    "not UTF-8": (b'[{"fragment_id": "\xff"}]', "previous: PREV is not UTF-8 (line 1, byte 18)"),
    "malformed": (
        lines(record("a"), "{oops}"),
        "previous: malformed JSON at line 2: Expecting property name enclosed in double quotes",
    ),
    "NaN": (
        b'[{"fragment_id": "a", "token_count": NaN}]',
        "previous: malformed JSON at line 1: NaN is not standard JSON",
    ),
    "fragments not an array": (
        b'{"fragments": {"a": 1}}',
        "previous: fragments must be an array of records, got object",
    ),
    "a record that is not an object": (
        lines(record("a"), "[1]"),
        "previous: record 1 on line 2: expected a JSON object, got array",
    ),
    "no id": (b'[{"token_count": 1}]', "previous: record 0: missing field 'fragment_id'"),
    "no token count": (
        lines(record("a"), '{"fragment_id": "b", "relevance_score": 1}'),
        "previous: record 1 on line 2 (id 'b'): missing field 'token_count'",
    ),
    "an id not a string": (
        b'[{"fragment_id": 7, "token_count": 1}]',
        "previous: record 0: fragment_id must be a string, got number 7",
    ),
    "an empty id": (
        b'[{"fragment_id": "", "token_count": 1}]',
        "previous: record 0 (id ''): fragment_id must be non-empty",
    ),
    "a negative token count": (
        lines(record("a"), record("b"), record("c", -4)),
        "previous: record 2 on line 3 (id 'c'): token_count must be >= 0, got -4",
    ),
    "a token count a fraction": (
        b'{"fragments": [{"fragment_id": "a", "token_count": 1.5}]}',
        "previous: record 0 (id 'a'): token_count must be an integer, got number 1.5",
    ),
    "a token count past 2**63 - 1": (
        lines(record("a", 2**63)),
        "previous: record 0 on line 1 (id 'a'): token_count must be <= 2**63 - 1, got "
        "9223372036854775808",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_PREVIOUS))
def test_a_bad_previous_is_one_line_naming_it(tmp_path: Path, backend: str, case: str) -> None:
    data, message = BAD_PREVIOUS[case]
    (tmp_path / "PREV").write_bytes(data)
    (tmp_path / "IN").write_bytes(lines(*SECOND))
    completed = run(
        "compress",
        "IN",
        "--budget",
        "100",
        "--backend",
        backend,
        "--previous",
        "PREV",
        cwd=tmp_path,
    )
    assert failure(completed) == PROG + message + "\n"


def test_a_previous_that_cannot_be_read_is_named(tmp_path: Path, backend: str) -> None:
    missing = tmp_path / "missing.json"
    completed = compress(second_input(tmp_path), 100, backend, "--previous", str(missing))
    assert (
        failure(completed) == f"{PROG}previous: cannot read {missing}: No such file or directory\n"
    )
    completed = compress(second_input(tmp_path), 100, backend, "--previous", str(tmp_path))
    assert failure(completed).startswith(f"{PROG}previous: cannot read {tmp_path}: ")
    closed = run_cli(
        "compress",
        str(second_input(tmp_path)),
        "--budget",
        "100",
        "--backend",
        backend,
        "--previous",
        "-",
        stdin=CLOSED,
    )
    assert failure(closed) == f"{PROG}previous: cannot read standard input: it is closed\n"


def test_previous_records_need_only_an_id_and_a_token_count(tmp_path: Path, backend: str) -> None:
    # Relevance, required, group and variant_of are this turn's to say: PREV's are not read,
    # nor are repeated ids refused.
    previous = tmp_path / "previous.jsonl"
    previous.write_bytes(
        lines(
            '{"fragment_id": "a", "token_count": 30, "content": "alpha", "relevance_score": 7}',
            '{"fragment_id": "b", "token_count": 40, "content": "beta", "required": "yes", '
            '"group": [], "variant_of": ""}',
            '{"fragment_id": "b", "token_count": -0}',
        )
    )
    completed = compress(
        second_input(tmp_path),
        100,
        backend,
        "--previous",
        str(previous),
        "--max-value-loss",
        "0.5",
    )
    assert kept_ids(completed)[:2] == ["a", "b"]
    assert metadata(completed)["reused_tokens"] == 70


def test_counting_previous_on_the_python_backend_without_tiktoken_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # FILE's counts are given, PREV's are not: only PREV needs the encoding.
    previous = tmp_path / "previous.jsonl"
    previous.write_bytes(lines('{"fragment_id": "a", "content": "alpha"}'))
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    extra = ("--previous", str(previous), "--encoding", "o200k_base")
    assert kept_ids(compress(second_input(tmp_path), 100, "rust", *extra))
    told = failure(compress(second_input(tmp_path), 100, "python", *extra))
    assert told.startswith(
        f"{PROG}previous: the built-in encoding 'o200k_base' needs the compiled extension"
    )


# Bad input in FILE, said as without --previous (and before any problem with PREV).
BAD_FILES = {
    "malformed": lines(record("a"), "{"),
    "a bad record": lines(record("a"), record("b", -1)),
    "a bad field": b'[{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5, "group": 1}]',
    "not UTF-8": b"\xff",
    "empty": b"",
    "duplicate ids": lines(record("a"), record("b"), record("a")),
    "a group split across variant sets": lines(
        record("a", group="g", variant_of="f"), record("b", group="g")
    ),
    "two required in a variant set": b"["
    + b",\n".join(
        [
            record("a", required=True, variant_of="f").encode(),
            record("b", required=True, variant_of="f").encode(),
        ]
    )
    + b"]",
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_input_is_said_as_without_previous(tmp_path: Path, backend: str, case: str) -> None:
    (tmp_path / "IN").write_bytes(BAD_FILES[case])
    (tmp_path / "PREV").write_bytes(b"[{]")  # bad too, but read after IN
    without = run("compress", "IN", "--budget", "100", "--backend", backend, cwd=tmp_path)
    completed = run(
        "compress",
        "IN",
        "--budget",
        "100",
        "--backend",
        backend,
        "--previous",
        "PREV",
        cwd=tmp_path,
    )
    assert failure(completed) == failure(without)
    assert "previous" not in failure(completed)
    piped = run(
        "compress",
        "-",
        "--budget",
        "100",
        "--backend",
        backend,
        "--previous",
        "PREV",
        stdin=BAD_FILES[case],
        cwd=tmp_path,
    )
    assert failure(piped) == failure(
        run("compress", "-", "--budget", "100", "--backend", backend, stdin=BAD_FILES[case])
    )


@pytest.mark.parametrize("on_overflow", ["strict", "raise"])
def test_a_budget_the_policy_refuses_exits_as_without_previous(
    tmp_path: Path, backend: str, on_overflow: str
) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(lines(record("a", 50, required=True), record("b", 5)))
    previous = tmp_path / "previous.jsonl"
    previous.write_bytes(lines(record("b", 5)))
    policy = ("--on-overflow", on_overflow)
    without = compress(path, 10, backend, *policy)
    completed = compress(path, 10, backend, *policy, "--previous", str(previous))
    assert failure(completed, 3) == failure(without, 3)


def test_encoding_counts_the_records_of_both_inputs(tmp_path: Path, backend: str) -> None:
    texts = {"a": "alpha " * 20, "b": "beta " * 30, "c": "gamma"}
    path = tmp_path / "in.jsonl"
    path.write_bytes(
        lines(
            *[
                json.dumps({"fragment_id": k, "relevance_score": 0.5, "content": v})
                for k, v in texts.items()
            ]
        )
    )
    previous = tmp_path / "previous.jsonl"
    previous.write_bytes(
        lines(
            json.dumps({"fragment_id": "c", "content": "gamma"}),
            json.dumps({"fragment_id": "a", "content": texts["a"]}),
        )
    )
    counting = ("--encoding", "o200k_base", "--order", "input")
    without = compress(path, 1000, backend, *counting)
    completed = compress(path, 1000, backend, *counting, "--previous", str(previous))
    assert kept_ids(completed) == ["c", "a", "b"]
    counter = skeleton_compressor.TokenCounter("o200k_base")
    reused = counter.count(texts["c"]) + counter.count(texts["a"])
    assert metadata(completed) == {**metadata(without), "reused_tokens": reused}


def test_reused_tokens_is_zero_in_every_output_without_previous(
    tmp_path: Path, backend: str
) -> None:
    path = second_input(tmp_path)
    for extra in ([], ["--explain"]):
        assert metadata(compress(path, 100, backend, *extra))["reused_tokens"] == 0
        piped = compress("-", 100, backend, *extra, stdin=path.read_bytes())
        assert metadata(piped)["reused_tokens"] == 0


def test_help_tells_the_options() -> None:
    completed = run_cli("compress", "--help", text=True)
    assert completed.returncode == 0
    for option in ("--previous PREV", "--max-value-loss X", "--headroom H"):
        assert option in completed.stdout


def _generated(rng: random.Random, count: int) -> list[dict[str, object]]:
    records: list[dict[str, object]] = []
    for index in range(count):
        item: dict[str, object] = {
            "fragment_id": f"f{index}",
            "token_count": rng.randint(0, 40),
            "relevance_score": rng.choice([0.0, 0.25, 0.5, rng.random()]),
        }
        if rng.random() < 0.3:
            item["content"] = rng.choice(["x", "y", {"k": [1, 2]}])
        if rng.random() < 0.1:
            item["required"] = True
        if rng.random() < 0.2:
            item["group"] = rng.choice(["g", "h"])
        records.append(item)
    return records


def _fragment(item: dict[str, object]) -> ContextFragment:
    return ContextFragment(
        str(item["fragment_id"]),
        int(item["token_count"]),  # type: ignore[call-overload]
        float(item["relevance_score"]),  # type: ignore[arg-type]
        json.dumps(item.get("content", ""), sort_keys=True),
        bool(item.get("required", False)),
        item.get("group"),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("seed", range(12))
def test_the_records_kept_are_those_the_library_keeps(
    tmp_path: Path, backend: str, seed: int
) -> None:
    rng = random.Random(seed)
    earlier = _generated(rng, rng.randint(1, 12))
    # The next turn: scores drawn again, a record's content changed, records added.
    current = [
        {**item, "relevance_score": rng.choice([item["relevance_score"], rng.random()])}
        for item in earlier
    ]
    if rng.random() < 0.5:
        current[rng.randrange(len(current))]["content"] = "changed"
    current += [
        {**item, "fragment_id": f"n{index}"}
        for index, item in enumerate(_generated(rng, rng.randint(0, 5)))
    ]
    budget = rng.randint(0, 150)
    strategy = rng.choice(["greedy", "prefix", "density", "optimal"])
    order = rng.choice(["ranking", "input", "edges"])
    loss, room = rng.choice([0.0, 0.05, 0.3]), rng.choice([0.0, 0.2])
    options = {"strategy": strategy, "order": order, "min_relevance": rng.choice([0.0, 0.3])}
    fragments = tuple(map(_fragment, current))
    sent = skeleton_compressor.compress(
        tuple(map(_fragment, earlier)), rng.randint(0, 150), backend=backend, **options
    ).fragments
    expected = skeleton_compressor.explain(
        fragments,
        budget,
        backend=backend,
        previous=sent,
        max_value_loss=loss,
        headroom=room,
        **options,
    )

    path = tmp_path / "in.json"
    path.write_text(json.dumps(current))
    by_id = {item["fragment_id"]: item for item in earlier}
    previous = tmp_path / "previous.jsonl"
    previous.write_bytes(
        lines(*[json.dumps(by_id[f.fragment_id]) for f in sent]) if sent else b"[]"
    )
    completed = compress(
        path,
        budget,
        backend,
        "--strategy",
        strategy,
        "--order",
        order,
        "--min-relevance",
        str(options["min_relevance"]),
        "--previous",
        str(previous),
        "--max-value-loss",
        str(loss),
        "--headroom",
        str(room),
        "--explain",
    )
    assert completed.returncode == 0, completed
    output = json.loads(completed.stdout)
    this_turn = {item["fragment_id"]: item for item in current}
    assert output["fragments"] == [this_turn[f.fragment_id] for f in expected.result.fragments]
    assert output["skeleton_metadata"] == expected.result.metadata.to_dict()
    assert output["decisions"] == expected.to_dict()["decisions"]
