"""The command line as users run it: its commands and what they print, run in this process,
and the installed console script, run as a process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import skeleton_compressor
from support.cli_runner import run_cli

RECORDS = [
    {"fragment_id": "a", "token_count": 50, "relevance_score": 0.9, "content": "alpha", "x": 1},
    {"fragment_id": "b", "token_count": 80, "relevance_score": 0.8},
    {"fragment_id": "c", "token_count": 30, "relevance_score": 0.7},
]


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_cli(*args, stdin=stdin, text=True)


def assert_clean_failure(completed: subprocess.CompletedProcess[str], text: str) -> None:
    assert completed.returncode == 1, completed
    assert completed.stdout == ""
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1, completed.stderr
    assert "Traceback" not in completed.stderr
    assert text in lines[0]


def console_script() -> Path:
    """The script pip installed with the interpreter running the tests (not whichever
    `skeleton-compressor` comes first on PATH)."""
    directory = Path(sys.executable).parent
    if sys.platform != "win32":
        return directory / "skeleton-compressor"
    # A virtual environment keeps python.exe in Scripts; a base installation one level up.
    beside = directory / "skeleton-compressor.exe"
    return beside if beside.exists() else directory / "Scripts" / "skeleton-compressor.exe"


def test_console_script_is_installed() -> None:
    script = console_script()
    assert script.is_file(), script
    completed = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == f"skeleton-compressor {skeleton_compressor.__version__}"


def _demo_tables(text: str) -> list[tuple[str, list[list[str]]]]:
    """Each child's header line and its table rows, split into columns (rank, fragment_id,
    tokens, parent, child, reason); "..." lines are left out."""
    children = []
    for part in text.split("\nchild ")[1:]:
        header, *lines = part.splitlines()
        rows = [
            re.split(r"  +", line.strip())
            for line in lines
            if line[:6].strip().isdigit() and line.startswith("  ")
        ]
        children.append((header, rows))
    return children


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_demo(backend: str) -> None:
    completed = run("demo", "--backend", backend)
    assert completed.returncode == 0, completed.stderr
    out = completed.stdout
    # About two screens; the strategy side by side for the first child; no timings (bench
    # measures them); what to try next on one's own file, last.
    assert 40 <= len(out.splitlines()) <= 62
    assert f"backend {backend}" in out
    assert re.search(r"--strategy optimal would keep \d+ fragments, relevance [\d.]+", out)
    assert not re.search(r"\d (s|ms|us)\b", out)
    assert "skeleton-compressor compress your_fragments.jsonl --budget 2000" in out
    assert out.rstrip().endswith(
        "skeleton-compressor demo --verbose   (every fragment of every child)"
    )
    legend = [line for line in out.splitlines() if line.startswith("reasons: ")]
    assert len(legend) == 1
    children = _demo_tables(out)
    assert [re.search(r"\(budget (\d+)\)", header)[1] for header, _ in children] == [  # type: ignore[index]
        "6000",
        "2500",
        "600",
    ]
    for _header, rows in children:
        reasons = {row[5].split(" (")[0] for row in rows}
        # Every reason shown is in the legend; dropped fragments show their tokens and both
        # relevances, and what was left where there was no room.
        assert all(f"{reason}: " in legend[0] for reason in reasons), (reasons, legend)
        assert {"required", "fits", "no_room", "below_min_relevance"} <= reasons
        assert all(len(row) == 6 and row[2].isdigit() for row in rows), rows
        assert all(re.fullmatch(r"[01]\.\d\d", value) for row in rows for value in row[3:5])
        assert any(re.fullmatch(r"no_room \(\d+ left\)", row[5]) for row in rows)
        assert "task:statement" in [row[1] for row in rows]
    # Each child scores the parent's fragments for its own goal: three different skeletons,
    # each led by a different fragment, with a parent's score the child changed.
    assert len({rows[0][1] for _, rows in children}) == 3
    assert any(row[3] != row[4] for _, rows in children for row in rows)
    # The webhooks child cannot keep the payments client whole, and keeps its outline.
    client = "file:src/billing/payments_client.py#L1-120"
    webhooks = out.split("\nchild plan-billing-v2.webhooks ")[1].split("\nchild ")[0]
    assert webhooks.splitlines()[2] == (
        f"  {client} did not fit whole (980 tokens): kept as #outline (70 tokens)"
    )
    assert out.count("did not fit whole") == 1


def test_demo_verbose_lists_every_fragment_and_the_backends_agree() -> None:
    outputs = {}
    for backend in ("rust", "python"):
        completed = run("demo", "--backend", backend, "--verbose")
        assert completed.returncode == 0, completed.stderr
        outputs[backend] = completed.stdout.replace(f"backend {backend},", "backend -,")
    assert outputs["rust"] == outputs["python"]
    plain = {}
    for backend in ("rust", "python"):
        plain[backend] = run("demo", "--backend", backend).stdout.replace(
            f"backend {backend},", "backend -,"
        )
    assert plain["rust"] == plain["python"]
    for header, rows in _demo_tables(outputs["rust"]):
        names = [row[1] for row in rows]
        assert len(names) == len(set(names)) == 50, header
        kept = [row for row in rows if row[5] in ("fits", "required")]
        counted = re.search(r"kept (\d+) of 50 fragments", outputs["rust"].split(header)[1])
        assert counted is not None and int(counted[1]) == len(kept)
        # A grouped tool call comes with its output or not at all.
        call = next(row for row in rows if row[1] == "tool:grep -rn create_charge src")
        output = next(row for row in rows if row[1] == "tool-output:grep -rn create_charge src")
        assert call[0] == output[0] and call[5] == output[5]
        # One rendering of each file at most.
        kept_names = {row[1] for row in kept}
        assert not any(name + "#outline" in kept_names for name in kept_names)
    assert "... " not in outputs["rust"]


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize("form", ["array", "lines", "stdin"])
def test_compress(tmp_path: Path, backend: str, form: str) -> None:
    text = json.dumps(RECORDS) if form == "array" else "\n".join(map(json.dumps, RECORDS)) + "\n"
    path = tmp_path / "in.json"
    path.write_text(text)
    target = "-" if form == "stdin" else str(path)
    completed = run(
        "compress",
        target,
        "--budget",
        "100",
        "--backend",
        backend,
        stdin=text if form == "stdin" else None,
    )
    assert completed.returncode == 0, completed.stderr
    output = json.loads(completed.stdout)
    assert output["fragments"] == [RECORDS[0], RECORDS[2]]
    assert output["skeleton_metadata"]["compressed_tokens"] == 80
    assert output["skeleton_metadata"]["over_budget"] is False


def test_compress_prefix(tmp_path: Path) -> None:
    path = tmp_path / "in.json"
    path.write_text(json.dumps(RECORDS))
    completed = run("compress", str(path), "--budget", "100", "--strategy", "prefix")
    assert [f["fragment_id"] for f in json.loads(completed.stdout)["fragments"]] == ["a"]


def test_missing_file(tmp_path: Path) -> None:
    assert_clean_failure(
        run("compress", str(tmp_path / "nope.json"), "--budget", "5"), "cannot read"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[{"fragment_id": "a",', "malformed JSON at line 1"),
        (
            '{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5}\n{oops}\n',
            "malformed JSON at line 2",
        ),
        ("[1, 2]", "record 0: expected a JSON object"),
        (
            '[{"fragment_id": "a", "relevance_score": 0.5}]',
            "record 0 (id 'a'): missing field 'token_count'",
        ),
        (
            '{"fragment_id": "a", "tokens": 3, "relevance_score": 0.5}\n',
            "record 0 on line 1 (id 'a'): missing field 'token_count' (the record has "
            "'tokens': name it 'token_count')",
        ),
        (
            '[{"id": "a", "token_count": 3, "score": 0.5}]',
            "record 0: missing field 'fragment_id' (the record has 'id': name it 'fragment_id')",
        ),
        (
            '[{"fragment_id": "a", "token_count": 3, "relevence_score": 0.5}]',
            "record 0 (id 'a'): missing field 'relevance_score' (the record has "
            "'relevence_score': name it 'relevance_score')",
        ),
        (
            '{"skeleton_metadata": {}, "fragments": [{"fragment_id": "a", "token_count": 1, '
            '"relevance_score": 0.5}]}',
            "record 0 on line 1: missing field 'fragment_id' (an object of records has "
            '"fragments" as its first key)',
        ),
        (
            # A record's own field named fragments is no output: the usual hint.
            '[{"fragment_id": "a", "tokens": 1, "relevance_score": 0.5, "fragments": []}]',
            "record 0 (id 'a'): missing field 'token_count' (the record has 'tokens': name it "
            "'token_count')",
        ),
        (
            '{"fragment_id": "a", "content": "some text", "relevance_score": 0.5}\n',
            "record 0 on line 1 (id 'a'): missing field 'token_count' (pass --encoding NAME "
            "to count the tokens of its content)",
        ),
        (
            "fragment_id,token_count,relevance_score\na,3,0.5\n",
            "bad.json is not JSON (line 1: Expecting value); records are read from a JSON "
            'array of objects, an object with a "fragments" array, or JSON Lines (one object '
            "per line)",
        ),
        (
            '\n\n{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5\n',
            "malformed JSON at line 3",
        ),
        (
            '{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5}\n'
            '{"fragment_id": "b", "token_count": 1, "relevance_score": 0.5, "content": "x\x00"}\n',
            "malformed JSON at line 2: a control character inside a string (written raw; JSON "
            "escapes it, as \\u0000)",
        ),
        (
            '[{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5},'
            ' {"fragment_id": "b", "token_count": -4, "relevance_score": 0.5}]',
            "record 1 (id 'b'): token_count must be >= 0, got -4",
        ),
        (
            '[{"fragment_id": "a", "token_count": 1.5, "relevance_score": 0.5}]',
            "record 0 (id 'a'): token_count must be an integer, got number 1.5",
        ),
        (
            '[{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5},'
            ' {"fragment_id": "a", "token_count": 1, "relevance_score": 0.5}]',
            "duplicate fragment_id 'a' at record 0 and record 1",
        ),
    ],
)
@pytest.mark.parametrize("backend", ["rust", "python"])
def test_bad_input(tmp_path: Path, text: str, problem: str, backend: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    assert_clean_failure(run("compress", str(path), "--budget", "5", "--backend", backend), problem)


DEEP = "[" * 100_000 + "]" * 100_000
DEEPLY_NESTED = {
    "array": (
        '[{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5, "content": ' + DEEP + "}]",
        "malformed JSON at line 1: values nested too deeply to read",
    ),
    "lines": (
        '{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5}\n'
        '{"fragment_id": "b", "content": ' + DEEP + "}",
        "malformed JSON at line 2: values nested too deeply to read",
    ),
}


@pytest.mark.parametrize("form", sorted(DEEPLY_NESTED))
@pytest.mark.parametrize("backend", ["rust", "python"])
def test_values_nested_too_deeply(tmp_path: Path, form: str, backend: str) -> None:
    text, problem = DEEPLY_NESTED[form]
    path = tmp_path / "deep.json"
    path.write_text(text)
    assert_clean_failure(run("compress", str(path), "--budget", "5", "--backend", backend), problem)


def test_json_lines_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps(RECORDS[0]) + "\n\n" + json.dumps({**RECORDS[1], "relevance_score": 2})
    )
    assert_clean_failure(
        run("compress", str(path), "--budget", "5"),
        "record 1 on line 3 (id 'b'): relevance_score must be in [0, 1], got 2",
    )


@pytest.mark.parametrize("budget", ["-1", "1.5", "x", "", "-0.0"])
def test_every_bad_budget_is_bad_usage(tmp_path: Path, budget: str) -> None:
    path = tmp_path / "in.json"
    path.write_text(json.dumps(RECORDS))
    completed = run("compress", str(path), f"--budget={budget}")
    assert completed.returncode == 2, completed
    assert completed.stderr == (
        "skeleton-compressor compress: error: argument --budget: must be an integer >= 0, "
        f"got {budget!r} (see --help)\n"
    )


def test_bench_json() -> None:
    completed = run("bench", "--sizes", "10", "200", "--json")
    assert completed.returncode == 0, completed.stderr
    rows = json.loads(completed.stdout)
    assert [row["size"] for row in rows] == [10, 200]
    assert all(row["rust_seconds"] > 0 and row["python_seconds"] > 0 for row in rows)
    assert completed.stderr == ""  # what it is doing is said on a terminal only


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--sizes", str(2**32)], "argument --sizes: sizes must be in [1, 4294967295], got "),
        (["--sizes", "0"], "argument --sizes: sizes must be in [1, 4294967295], got 0"),
        (["--cli", "--variants"], "--cli and --variants are two benches: choose one"),
        (["--cli", "--scores", "equal"], "--scores and --strategies time the library's calls"),
        (["--variants", "--strategies", "optimal"], "--scores and --strategies time the"),
        (["--backend", "rust"], "unrecognized arguments: --backend rust"),
    ],
)
def test_bench_refuses_what_it_would_not_read(args: list[str], problem: str) -> None:
    completed = run("bench", *args)
    assert completed.returncode == 2, completed
    assert completed.stderr.startswith(f"skeleton-compressor bench: error: {problem}")
    assert completed.stderr.endswith(" (see --help)\n") and completed.stdout == ""


@pytest.mark.parametrize("command", [["compress", "in.jsonl", "--budget", "1"], ["demo"]])
def test_an_argument_a_command_does_not_take_is_told_by_that_command(
    command: list[str],
) -> None:
    completed = run(*command, "--bogus", "extra")
    assert (completed.returncode, completed.stderr) == (
        2,
        f"skeleton-compressor {command[0]}: error: unrecognized arguments: --bogus extra "
        "(see --help)\n",
    )
    # Before the command's name, it is not the command's.
    completed = run("--bogus", *command)
    assert (completed.returncode, completed.stderr) == (
        2,
        "skeleton-compressor: error: unrecognized arguments: --bogus (see --help)\n",
    )


def test_bench_cli_json() -> None:
    completed = run("bench", "--cli", "--sizes", "300", "--json")
    assert completed.returncode == 0, completed.stderr
    rows = json.loads(completed.stdout)
    assert [(row["records"], row["form"]) for row in rows] == [(300, "lines"), (300, "array")]
    for row in rows:
        assert row["file_bytes"] > 300 * 90
        assert row["rust_seconds"] > 0 and row["python_seconds"] > 0
        if sys.platform == "win32":  # no `resource` module: no peak memory figure
            assert row["rust_peak_bytes"] is None
        else:
            assert row["rust_peak_bytes"] > row["file_bytes"]


def records_text(records: list[dict[str, object]], form: str) -> str:
    """A JSON array, or JSON Lines with a blank line after the first record (so that record i
    is on line i + 2 from the second on)."""
    if form == "array":
        return json.dumps(records)
    lines = [json.dumps(record) for record in records]
    return lines[0] + "\n\n" + "\n".join(lines[1:]) + "\n"


def record(number: int, form: str) -> str:
    line = number + 1 if number == 0 else number + 2
    return f"record {number}" + ("" if form == "array" else f" on line {line}")


# Ids that look like the compressor's own places: the command line must not mistake them for one.
PLACE_LIKE_IDS = ["fragments[7]", "fragments[0]x", "rows[1]"]


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize("form", ["array", "lines"])
@pytest.mark.parametrize("fragment_id", PLACE_LIKE_IDS)
def test_bad_token_count_with_a_place_like_id(
    tmp_path: Path, fragment_id: str, form: str, backend: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(
        records_text(
            [
                {"fragment_id": "a", "token_count": 1, "relevance_score": 0.5},
                {"fragment_id": fragment_id, "token_count": -4, "relevance_score": 0.5},
            ],
            form,
        )
    )
    completed = run("compress", str(path), "--budget", "5", "--backend", backend)
    assert completed.returncode == 1, completed
    assert completed.stdout == ""
    assert completed.stderr == (
        f"skeleton-compressor: error: {record(1, form)} (id {fragment_id!r}): "
        "token_count must be >= 0, got -4\n"
    )


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize("form", ["array", "lines"])
@pytest.mark.parametrize("fragment_id", PLACE_LIKE_IDS)
def test_duplicate_place_like_id(tmp_path: Path, fragment_id: str, form: str, backend: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(
        records_text(
            [
                {"fragment_id": "a", "token_count": 1, "relevance_score": 0.5},
                {"fragment_id": fragment_id, "token_count": 1, "relevance_score": 0.5},
                {"fragment_id": "b", "token_count": 1, "relevance_score": 0.5},
                {"fragment_id": fragment_id, "token_count": 1, "relevance_score": 0.5},
            ],
            form,
        )
    )
    completed = run("compress", str(path), "--budget", "5", "--backend", backend)
    assert completed.returncode == 1, completed
    assert completed.stdout == ""
    assert completed.stderr == (
        f"skeleton-compressor: error: duplicate fragment_id {fragment_id!r} at "
        f"{record(1, form)} and {record(3, form)}\n"
    )


POLICY_RECORDS = [
    {"fragment_id": "task", "token_count": 40, "relevance_score": 0.2, "required": True},
    {"fragment_id": "call", "token_count": 30, "relevance_score": 0.9, "group": "tool"},
    {"fragment_id": "result", "token_count": 50, "relevance_score": 0.3, "group": "tool"},
    {"fragment_id": "note", "token_count": 20, "relevance_score": 0.6},
    {"fragment_id": "junk", "token_count": 5, "relevance_score": 0.05},
]


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_compress_with_a_policy_and_explain(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(map(json.dumps, POLICY_RECORDS)) + "\n")
    completed = run(
        "compress",
        str(path),
        "--budget",
        "130",
        "--min-relevance",
        "0.1",
        "--order",
        "input",
        "--explain",
        "--backend",
        backend,
    )
    assert completed.returncode == 0, completed.stderr
    output = json.loads(completed.stdout)
    assert [f["fragment_id"] for f in output["fragments"]] == ["task", "call", "result"]
    assert output["decisions"]["junk"] == {
        "kept": False,
        "reason": "below_min_relevance",
        "rank": 3,
        "budget_left": None,
    }
    assert output["decisions"]["note"]["reason"] == "no_room"


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize("policy", ["raise", "strict"])
def test_a_budget_that_cannot_be_met_exits_3(tmp_path: Path, backend: str, policy: str) -> None:
    path = tmp_path / "in.json"
    path.write_text(json.dumps(POLICY_RECORDS))
    completed = run(
        "compress", str(path), "--budget", "30", "--on-overflow", policy, "--backend", backend
    )
    assert completed.returncode == 3, completed
    assert completed.stdout == ""
    assert completed.stderr.strip().splitlines() == [
        "skeleton-compressor: error: required fragments need 40 tokens, skeleton_budget is 30"
    ]


@pytest.mark.parametrize("value", ["1.5", "-0.1", "x"])
def test_a_bad_floor_is_bad_usage(tmp_path: Path, value: str) -> None:
    path = tmp_path / "in.json"
    path.write_text(json.dumps(POLICY_RECORDS))
    completed = run("compress", str(path), "--budget", "30", "--min-relevance", value)
    assert completed.returncode == 2
    assert "--min-relevance" in completed.stderr


def test_a_bad_required_field_names_the_record(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(
        '{"fragment_id": "a", "token_count": 1, "relevance_score": 0.5, "required": 1}\n'
    )
    assert_clean_failure(
        run("compress", str(path), "--budget", "5"),
        "record 0 on line 1 (id 'a'): required must be true or false, got number 1",
    )
