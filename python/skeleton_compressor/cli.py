"""The `skeleton-compressor` command: demo, compress, count and bench."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from importlib import resources
from typing import Any, TextIO

from . import __version__, _messages
from .backend import BACKENDS
from .errors import BudgetExceededError, FragmentError
from .plan import Plan
from .policy import ON_OVERFLOW, ORDERS
from .service import STRATEGIES, SkeletonCompressorService
from .types import ContextFragment, FragmentDecision, SkeletonMetadata

PROG = "skeleton-compressor"
_FIELDS = ("fragment_id", "token_count", "relevance_score")


class InputError(Exception):
    """Bad input, reported as one line on stderr."""


class BudgetError(Exception):
    """A budget the overflow policy refused to go over, reported as one line on stderr."""


EXIT_BAD_INPUT, EXIT_USAGE, EXIT_BUDGET = 1, 2, 3


def _fragment_from(record: object, number: int) -> ContextFragment:
    if not isinstance(record, dict):
        raise InputError(f"record {number}: expected a JSON object, got {type(record).__name__}")
    missing = [field for field in _FIELDS if field not in record]
    if missing:
        raise InputError(f"record {number}: missing field {missing[0]!r}")
    return ContextFragment(
        record["fragment_id"],
        record["token_count"],
        record["relevance_score"],
        record.get("content", ""),
        record.get("required", False),
        record.get("group"),
    )


# Python's JSON reader nests as deep as the interpreter's recursion limit allows.
_TOO_DEEP = "values nested too deeply to read"


def _decoded(text: str, line: int | None) -> Any:
    """`json.loads(text)`, its failures as bad input naming the line: `line` for one line of
    JSON Lines, else the line the reader stopped at."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        at = error.lineno if line is None else line
        raise InputError(f"malformed JSON at line {at}: {error.msg}") from None
    except RecursionError:
        where = "" if line is None else f" at line {line}"
        raise InputError(f"malformed JSON{where}: {_TOO_DEEP}") from None


def parse_records(text: str) -> tuple[list[Any], list[int] | None]:
    """A JSON array of records, or JSON Lines (one record per non-blank line); for JSON Lines,
    also the line each record is on."""
    if text.lstrip().startswith("["):
        records = _decoded(text, None)
        if not isinstance(records, list):
            raise InputError("expected a JSON array of fragment records")
        return records, None
    records, lines = [], []
    for line_number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            records.append(_decoded(line, line_number))
            lines.append(line_number)
    return records, lines


def _in_record_terms(error: FragmentError, lines: list[int] | None) -> str:
    """The error's message, naming the compressor's `fragments[i]` as record i of the input
    (and its line, for JSON Lines)."""

    def record(index: int) -> str:
        if lines is None or not 0 <= index < len(lines):
            return f"record {index}"
        return f"record {index} on line {lines[index]}"

    return _messages.worded(error, record)


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise InputError(f"{path} is not UTF-8: {error.reason}") from None


def run_compress(args: argparse.Namespace, out: TextIO) -> None:
    records, lines = parse_records(_read_text(args.file))
    readable = records
    if args.encoding is not None:
        from .cli_tokens import counted_records

        readable = counted_records(records, lines, args.encoding, args.backend)
    fragments = tuple(_fragment_from(record, number) for number, record in enumerate(readable))
    service = SkeletonCompressorService(
        backend=args.backend,
        strategy=args.strategy,
        min_relevance=args.min_relevance,
        on_overflow=args.on_overflow,
        order=args.order,
    )
    try:
        explanation = service.explain(fragments, args.budget) if args.explain else None
        result = explanation.result if explanation else service.compress(fragments, args.budget)
    except BudgetExceededError as error:
        raise BudgetError(str(error)) from None
    except FragmentError as error:
        raise InputError(_in_record_terms(error, lines)) from None
    except (TypeError, ValueError) as error:
        # Not about one record (a negative --budget): the message as it is.
        raise InputError(str(error)) from None
    position = {id(fragment): number for number, fragment in enumerate(fragments)}
    kept = [records[position[id(fragment)]] for fragment in result.fragments]
    output: dict[str, Any] = {"fragments": kept, "skeleton_metadata": result.metadata.to_dict()}
    if explanation is not None:
        output["decisions"] = explanation.to_dict()["decisions"]
    json.dump(output, out)
    out.write("\n")


def load_example() -> tuple[Plan, list[dict[str, Any]], float]:
    """The built-in example: a parent plan with its context, the subplans to spawn (each
    with its own relevance of the parent's fragments), and the relevance floor."""
    data = json.loads(
        resources.files(__package__).joinpath("data/example_plan.json").read_text("utf-8")
    )
    parent = data["parent"]
    context = tuple(
        ContextFragment(
            f["fragment_id"],
            f["token_count"],
            f["relevance_score"],
            f["content"],
            f.get("required", False),
            f.get("group"),
        )
        for f in parent["context"]
    )
    plan = Plan(parent["plan_id"], parent["goal"], context=context)
    return plan, data["subplans"], data["min_relevance"]


def _metadata_line(metadata: SkeletonMetadata) -> str:
    over = "  OVER BUDGET" if metadata.over_budget else ""
    return (
        f"kept {metadata.fragments_kept} of {metadata.fragments_total} fragments, "
        f"{metadata.compressed_tokens} of {metadata.original_tokens} tokens "
        f"(ratio {metadata.ratio:.3f}, budget {metadata.skeleton_budget}){over}"
    )


def _dropped_lines(decisions: Sequence[FragmentDecision], shown: int = 3) -> list[str]:
    """One line per reason a fragment was dropped: how many, and the best-ranked few."""
    by_reason: dict[str, list[FragmentDecision]] = {}
    for decision in decisions:
        if not decision.kept:
            by_reason.setdefault(decision.reason, []).append(decision)
    lines = []
    for reason, dropped in by_reason.items():
        dropped.sort(key=lambda d: d.rank)
        names = ", ".join(d.fragment.fragment_id for d in dropped[:shown])
        more = f", +{len(dropped) - shown} more" if len(dropped) > shown else ""
        lines.append(f"dropped {len(dropped):>2} {reason}: {names}{more}")
    return lines


def run_demo(args: argparse.Namespace, out: TextIO) -> None:
    parent, subplans, floor = load_example()
    service = SkeletonCompressorService(
        backend=args.backend, strategy=args.strategy, min_relevance=floor
    )
    total = sum(fragment.token_count for fragment in parent.context)
    out.write(f"parent {parent.plan_id}: {parent.goal}\n")
    out.write(
        f"  {len(parent.context)} context fragments, {total} tokens; backend {service.backend}, "
        f"strategy {service.strategy}, min_relevance {floor}\n"
        "  the task statement is required in every child; each tool call is grouped with its "
        "output;\n  each child scores the parent's fragments for its own goal\n"
    )
    for spec in subplans:
        relevance = spec.get("relevance")
        child = parent.spawn_subplan(
            spec["plan_id"],
            spec["goal"],
            spec["skeleton_budget"],
            compressor=service,
            relevance=relevance,
        )
        explanation = service.explain(parent.rescored(relevance), spec["skeleton_budget"])
        out.write(f"\nchild {child.plan_id}: {child.goal}\n")
        width = max((len(f.fragment_id) for f in child.context), default=10)
        out.write(f"  {'#':>3}  {'fragment_id':<{width}}  {'tokens':>6}  {'relevance':>9}  note\n")
        for rank, fragment in enumerate(child.context, start=1):
            note = "required" if fragment.required else fragment.group or ""
            if fragment.group is not None:
                note = f"group {fragment.group}"
            out.write(
                f"  {rank:>3}  {fragment.fragment_id:<{width}}  {fragment.token_count:>6}  "
                f"{fragment.relevance_score:>9.2f}  {note}\n".rstrip()
                + "\n"
            )
        assert child.skeleton_metadata is not None
        out.write(f"  {_metadata_line(child.skeleton_metadata)}\n")
        for line in _dropped_lines(explanation.decisions):
            out.write(f"  {line}\n")


def _budget(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def _floor(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Pick the context fragments a child plan inherits."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def common(command: argparse.ArgumentParser) -> None:
        command.add_argument("--strategy", choices=STRATEGIES, default="greedy")
        command.add_argument("--backend", choices=BACKENDS, default="auto")

    demo = commands.add_parser("demo", help="compress a built-in parent plan into three subplans")
    common(demo)
    demo.set_defaults(run=run_demo)

    compress = commands.add_parser(
        "compress", help="compress fragments from a JSON array or JSON Lines file"
    )
    compress.add_argument("file", help="input file, or - for standard input")
    compress.add_argument("--budget", type=_budget, required=True, help="skeleton budget in tokens")
    common(compress)
    compress.add_argument(
        "--min-relevance",
        type=_floor,
        default=0.0,
        help="keep fragments (or groups) below this relevance out unless required",
    )
    compress.add_argument(
        "--on-overflow",
        choices=ON_OVERFLOW,
        default="keep_top",
        help="when the budget cannot be met: keep_top goes over it, strict never does, "
        f"raise exits with status {EXIT_BUDGET}",
    )
    compress.add_argument(
        "--order", choices=ORDERS, default="ranking", help="order of the kept fragments"
    )
    compress.add_argument(
        "--explain",
        action="store_true",
        help='add "decisions": why each fragment was kept or dropped',
    )
    compress.set_defaults(run=run_compress)

    from .bench import add_bench_command
    from .cli_tokens import add_count_command, add_encoding_option

    add_encoding_option(
        compress, "count the content of records without a token_count with this encoding"
    )
    add_count_command(commands)
    add_bench_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.run(args, sys.stdout)
    except InputError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BudgetError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return EXIT_BUDGET
    except ImportError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
    return 0
