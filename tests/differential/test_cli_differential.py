"""Generated record files, valid and broken, through both backends' readers, as the command
line reads them: the same bytes out, or the same one-line error with the same exit status."""

from __future__ import annotations

import json
import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.cli_runner import run_cli

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
VALID = {
    "fragment_id": st.one_of(
        st.text(min_size=1, max_size=6),
        st.text(min_size=1, max_size=6).map(lambda text: f"src/{text}.py#chunk-1"),
        st.sampled_from(["a", "caf\u00e9", "\ud800", 'q"uote', "\\n"]),
    ),
    "token_count": st.one_of(st.integers(0, 60), st.just(2**63 - 1)),
    "relevance_score": st.one_of(st.floats(0, 1), st.sampled_from([0, 1, -0.0, 0.5])),
    "required": st.booleans(),
    "group": st.sampled_from(["g", "h", None]),
    "content": JSON_VALUES,
}
BROKEN = {
    "fragment_id": st.one_of(st.just(""), JSON_SCALARS),
    "token_count": st.sampled_from([-1, 2**63, 10**400, -(10**400), 1.0, 1.5, "3", True, None]),
    "relevance_score": st.sampled_from([2, -0.5, 1.0000001, 1e400, 10**50, "0.5", False, None]),
    "required": JSON_SCALARS,
    "group": st.one_of(st.just(""), JSON_SCALARS),
    "content": JSON_VALUES,
}
OPTIONAL = ("required", "group", "content")


@st.composite
def record(draw: st.DrawFn) -> dict[str, object]:
    return {
        field: draw(values)
        for field, values in VALID.items()
        if field not in OPTIONAL or draw(st.integers(0, 2)) == 0
    }


@st.composite
def broken(draw: st.DrawFn, items: list[object]) -> list[object]:
    """`items` with one thing wrong: a field's value, a field missing, or a record that is not
    an object."""
    items = list(items)
    at = draw(st.integers(0, len(items) - 1))
    target = items[at]
    assert isinstance(target, dict)
    target = dict(target)
    how = draw(st.sampled_from(["value", "missing", "shape"]))
    field = draw(st.sampled_from(sorted(VALID)))
    if how == "value":
        target[field] = draw(BROKEN[field])
    elif how == "missing":
        target.pop(field, None)
    else:
        items[at] = draw(JSON_VALUES)
        return items
    items[at] = target
    return items


def text_of(items: list[object], form: str, indent: int | None, ascii_only: bool) -> str:
    dumped = [json.dumps(item, indent=indent, ensure_ascii=ascii_only) for item in items]
    if form == "lines":
        return "\n".join(json.dumps(item, ensure_ascii=ascii_only) for item in items) + "\n"
    array = "[" + ",\n".join(dumped) + "]"
    return array if form == "array" else '{"fragments": ' + array + ', "n": [1]}'


@st.composite
def inputs(draw: st.DrawFn) -> bytes:
    drawn = draw(st.lists(record(), max_size=10))
    for index, item in enumerate(drawn):
        item["fragment_id"] = f"{item['fragment_id']}#{index}"
    items: list[object] = list(drawn)
    mode = draw(st.sampled_from(["valid", "valid", "record", "record", "duplicate", "bytes"]))
    if mode == "record" and items:
        items = draw(broken(items))
    if mode == "duplicate" and len(drawn) > 1:
        first, second = draw(st.lists(st.sampled_from(drawn), min_size=2, max_size=2))
        second["fragment_id"] = first["fragment_id"]
    form = draw(st.sampled_from(["array", "lines", "wrapped"]))
    text = text_of(items, form, draw(st.sampled_from([None, 1])), draw(st.booleans()))
    data = text.encode("utf-8", "surrogatepass" if mode == "bytes" else "replace")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    if mode == "bytes" and data:
        at = draw(st.integers(0, len(data) - 1))
        junk = draw(st.sampled_from([b"", b",", b"]", b"}", b"{", b'"', b"\n", b"NaN", b"\xff"]))
        data = data[:at] + junk + data[at + draw(st.integers(0, 2)) :]
    return data


def outcome(data: bytes, options: list[str], from_file: bool) -> tuple[int, bytes, str]:
    """The exit status, output and error of `compress` on `data`, from a file or from standard
    input, with the input named `path_name()` in messages."""
    if not from_file:
        completed = run_cli("compress", "-", *options, stdin=data)
        return _named(completed.returncode, completed.stdout, completed.stderr, "standard input")
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "IN")
        with open(path, "wb") as handle:
            handle.write(data)
        completed = run_cli("compress", path, *options)
        return _named(completed.returncode, completed.stdout, completed.stderr, path)


def _named(status: int, out: bytes, err: bytes, source: str) -> tuple[int, bytes, str]:
    return status, out, err.decode().replace(source, path_name())


def path_name() -> str:
    return os.path.join("somewhere", "IN")


@settings(
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    data=inputs(),
    budget=st.integers(0, 200),
    floor=st.sampled_from([0.0, 0.4]),
    on_overflow=st.sampled_from(["keep_top", "strict", "raise"]),
    order=st.sampled_from(["ranking", "input", "edges"]),
    explain=st.booleans(),
)
def test_both_backends_read_every_input_alike(
    data: bytes, budget: int, floor: float, on_overflow: str, order: str, explain: bool
) -> None:
    def options(backend: str) -> list[str]:
        chosen = ["--budget", str(budget), "--backend", backend, "--strategy", "greedy"]
        chosen += ["--min-relevance", str(floor), "--on-overflow", on_overflow, "--order", order]
        return chosen + (["--explain"] if explain else [])

    python = outcome(data, options("python"), from_file=False)
    assert outcome(data, options("rust"), from_file=False) == python
    assert outcome(data, options("rust"), from_file=True) == python
    status, out, err = python
    # Done, bad input (1) or a budget the overflow policy refused (3): never bad usage.
    assert status in (0, 1, 3), err
    if status == 0:
        document = json.loads(out)
        assert document["skeleton_metadata"]["skeleton_budget"] == budget


def outcome_with_previous(
    data: bytes, previous: bytes, options: list[str], from_file: bool
) -> tuple[int, bytes, str]:
    """`outcome` given `--previous` a file of `previous`'s bytes, named `path_name()` and
    `previous_name()` in messages."""
    with tempfile.TemporaryDirectory() as directory:
        sent = os.path.join(directory, "PREV")
        with open(sent, "wb") as handle:
            handle.write(previous)
        options = [*options, "--previous", sent]
        if from_file:
            path = os.path.join(directory, "IN")
            with open(path, "wb") as handle:
                handle.write(data)
            completed = run_cli("compress", path, *options)
            source = path
        else:
            completed = run_cli("compress", "-", *options, stdin=data)
            source = "standard input"
        err = completed.stderr.decode().replace(sent, previous_name())
        return _named(completed.returncode, completed.stdout, err.encode(), source)


def previous_name() -> str:
    return os.path.join("somewhere", "PREV")


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    data=inputs(),
    other=st.one_of(st.none(), inputs()),
    earlier_budget=st.one_of(st.none(), st.integers(0, 200)),
    budget=st.integers(0, 200),
    strategy=st.sampled_from(["greedy", "prefix", "density", "optimal"]),
    floor=st.sampled_from([0.0, 0.4]),
    on_overflow=st.sampled_from(["keep_top", "strict", "raise"]),
    order=st.sampled_from(["ranking", "input", "edges"]),
    explain=st.booleans(),
    shares=st.sampled_from(
        [("0", "0"), ("0.05", "0"), ("0.5", "0"), ("0.9", "0.25"), ("0", "0.5")]
    ),
)
def test_both_backends_reuse_a_previous_output_alike(
    data: bytes,
    other: bytes | None,
    earlier_budget: int | None,
    budget: int,
    strategy: str,
    floor: float,
    on_overflow: str,
    order: str,
    explain: bool,
    shares: tuple[str, str],
) -> None:
    """`--previous` given what `compress` printed for the same input at the same budget or
    another (or any other input, broken ones too): the same bytes out, or the same error."""
    if other is None:
        earlier_budget = budget if earlier_budget is None else earlier_budget
        earlier = outcome(data, ["--budget", str(earlier_budget), "--order", order], True)
        previous = earlier[1] if earlier[0] == 0 else data
    else:
        previous = other

    def options(backend: str) -> list[str]:
        chosen = ["--budget", str(budget), "--backend", backend, "--strategy", strategy]
        chosen += ["--min-relevance", str(floor), "--on-overflow", on_overflow, "--order", order]
        chosen += ["--max-value-loss", shares[0], "--headroom", shares[1]]
        return chosen + (["--explain"] if explain else [])

    python = outcome_with_previous(data, previous, options("python"), from_file=True)
    assert outcome_with_previous(data, previous, options("rust"), from_file=True) == python
    assert outcome_with_previous(data, previous, options("rust"), from_file=False) == python
    status, out, err = python
    assert status in (0, 1, 3), err
    if status == 0:
        document = json.loads(out)
        reused = document["skeleton_metadata"]["reused_tokens"]
        assert 0 <= reused <= document["skeleton_metadata"]["compressed_tokens"]
