"""pack_messages beside langchain-core's trim_messages: the tokens each keeps at the same
budgets on generated agent histories (and whether what it keeps is a valid history), and the
time pack_messages takes at 10,000 messages beside building those messages.

Run with `-s` to see the tables:
    python -m pytest benches/test_integrations_langchain_messages.py -s -p no:randomly
"""

from __future__ import annotations

import functools
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from statistics import mean

import pytest
from support.frameworks import framework

lc = framework("langchain_core")

from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import trim_messages  # noqa: E402
from skeleton_compressor import TokenCounter  # noqa: E402
from skeleton_compressor.cli.bench.timing import best_times  # noqa: E402
from skeleton_compressor.integrations.langchain import pack_messages  # noqa: E402

COUNTER = TokenCounter("o200k_base")
SHARES = (0.1, 0.2, 0.3, 0.5)
HISTORIES = 30
TARGET = 10_000

# What a history is made of: (kind, text, call ids); kinds system, human, ai, calls, tool.
Spec = list[tuple[str, str, tuple[str, ...]]]


def words(rng: random.Random, low: int, high: int) -> str:
    vocabulary = ("the", "invoice", "total", "rounds", "test", "fails", "because", "line", "of")
    return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(low, high)))


def agent_spec(rng: random.Random, size: int, longest: int = 400) -> Spec:
    """An agent's history: a system prompt, then turns of a question and up to four steps,
    each a reply or one to three parallel tool calls answered in any order, the outputs
    mostly short and now and then long (log-uniform, 1 to `longest` lines)."""
    spec: Spec = [("system", words(rng, 20, 60), ())]
    made = 0
    while len(spec) < size:
        spec.append(("human", words(rng, 3, 40), ()))
        for _ in range(rng.randint(0, 4)):
            width = rng.choice((0, 0, 1, 1, 2, 3))
            if width == 0:
                spec.append(("ai", words(rng, 5, 150), ()))
                continue
            ids = tuple(f"call_{made + k}" for k in range(width))
            made += width
            spec.append(("calls", words(rng, 0, 12), ids))
            for call_id in rng.sample(ids, width):
                lines = int(2 ** rng.uniform(0, math.log2(longest + 1)))
                spec.append(("tool", (words(rng, 4, 12) + "\n") * lines, (call_id,)))
    while spec[-1][0] in ("calls", "tool"):  # end on a whole turn step
        spec.pop()
    return spec


def build(spec: Spec) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for kind, text, ids in spec:
        if kind == "system":
            messages.append(SystemMessage(text))
        elif kind == "human":
            messages.append(HumanMessage(text))
        elif kind == "ai":
            messages.append(AIMessage(text))
        elif kind == "calls":
            calls = [
                {"name": "grep", "args": {"pattern": call_id}, "id": call_id, "type": "tool_call"}
                for call_id in ids
            ]
            messages.append(AIMessage(text, tool_calls=calls))
        else:
            messages.append(ToolMessage(text, tool_call_id=ids[0]))
    return messages


def counter_for(messages: Sequence[BaseMessage]) -> Callable[[BaseMessage], int]:
    """One count per message (its text, its calls' names and arguments, and 3 for the
    message), worked out once: the same counts for both packers."""
    counts = {}
    for message in messages:
        text = message.text
        for call in getattr(message, "tool_calls", []):
            text += call["name"] + json.dumps(call["args"])
        counts[id(message)] = COUNTER.count(text) + 3
    return lambda message: counts[id(message)]


def problems(kept: Sequence[BaseMessage], messages: Sequence[BaseMessage]) -> set[str]:
    """What makes `kept` an invalid history: "tools" when a tool message is not in the block
    right after the AI message calling it, or a kept call is not answered there; "start"
    when the first message after the system one is not a human one."""
    found = set()
    rest = [m for m in kept if not isinstance(m, SystemMessage)]
    if rest and not isinstance(rest[0], HumanMessage):
        found.add("start")
    answers = {m.tool_call_id: id(m) for m in messages if isinstance(m, ToolMessage)}
    expected: set[int] = set()
    for message in kept:
        if isinstance(message, ToolMessage):
            if id(message) not in expected:
                found.add("tools")
            expected.discard(id(message))
            continue
        if expected:
            found.add("tools")
        expected = set()
        if isinstance(message, AIMessage):
            expected = {answers[call["id"]] for call in message.tool_calls}
    if expected:
        found.add("tools")
    return found


@functools.cache
def histories() -> list[list[BaseMessage]]:
    rng = random.Random(2026)
    return [build(agent_spec(rng, rng.randint(60, 400))) for _ in range(HISTORIES)]


def trimmed(
    messages: list[BaseMessage], budget: int, count: Callable[[BaseMessage], int], **options: object
) -> list[BaseMessage]:
    return trim_messages(
        messages,
        max_tokens=budget,
        token_counter=lambda chosen: sum(count(m) for m in chosen),
        strategy="last",
        include_system=True,
        allow_partial=False,
        **options,  # type: ignore[arg-type]
    )


def test_tokens_kept_beside_trim_messages() -> None:
    methods: dict[
        str, Callable[[list[BaseMessage], int, Callable[[BaseMessage], int]], list[BaseMessage]]
    ] = {
        'trim_messages(start_on="human")': lambda m, b, c: trimmed(m, b, c, start_on="human"),
        "trim_messages (no start_on)": lambda m, b, c: trimmed(m, b, c),
        **{
            f'pack_messages("{strategy}")': (
                lambda m, b, c, strategy=strategy: pack_messages(
                    m, skeleton_budget=b, token_counter=c, strategy=strategy
                )
            )
            for strategy in ("greedy", "prefix", "optimal")
        },
    }
    rows = []
    for share in SHARES:
        kept: dict[str, list[float]] = {name: [] for name in methods}
        broken = {name: {"tools": 0, "start": 0} for name in methods}
        for messages in histories():
            count = counter_for(messages)
            budget = int(sum(count(m) for m in messages) * share)
            for name, method in methods.items():
                result = method(messages, budget, count)
                tokens = sum(count(m) for m in result)
                assert tokens <= budget
                kept[name].append(tokens / budget)
                for problem in problems(result, messages):
                    broken[name][problem] += 1
        for name in methods:
            rows.append((share, name, mean(kept[name]), broken[name]))
            if name.startswith("pack"):
                assert broken[name] == {"tools": 0, "start": 0}
    print(f"\n{HISTORIES} generated agent histories of 60 to 400 messages")
    print(f"{'budget':>6}  {'packer':<32} {'budget kept':>11}  {'broken calls':>12}  off a turn")
    for share, name, fill, bad in rows:
        print(
            f"{share:>6.0%}  {name:<32} {fill:>11.1%}  {bad['tools']:>9}/{HISTORIES}"
            f"  {bad['start']:>7}/{HISTORIES}"
        )


# 10,000 messages: pack_messages beside building them.


# "agent": tool outputs of 1 to 400 lines; "chat": of 1 to 4 lines.
LONGEST = {"agent": 400, "chat": 4}


@functools.cache
def big_spec(kind: str) -> Spec:
    return agent_spec(random.Random(10_000), TARGET, LONGEST[kind])


@functools.cache
def big_history(kind: str) -> list[BaseMessage]:
    return build(big_spec(kind))


@functools.cache
def quarter_budget(kind: str) -> int:
    counted = pack_messages(
        big_history(kind), skeleton_budget=0, token_counter=COUNTER, with_metadata=True
    )
    return counted.metadata.original_tokens // 4


def content_tokens(message: BaseMessage) -> int:
    return len(message.text) // 4 + 3


@pytest.fixture(params=sorted(LONGEST))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_time_building_10000_messages(benchmark, kind: str) -> None:  # type: ignore[no-untyped-def]
    spec = big_spec(kind)
    benchmark.group = f"langchain messages, 10,000, {kind}"
    benchmark.pedantic(lambda: build(spec), rounds=5, warmup_rounds=1)


@pytest.mark.parametrize("counter", ["o200k_base", "callable"])
def test_time_packing_10000_messages(benchmark, kind: str, counter: str) -> None:  # type: ignore[no-untyped-def]
    messages, budget = big_history(kind), quarter_budget(kind)
    count = COUNTER if counter == "o200k_base" else content_tokens
    benchmark.group = f"langchain messages, 10,000, {kind}"
    benchmark.pedantic(
        lambda: pack_messages(messages, skeleton_budget=budget, token_counter=count),
        rounds=5,
        warmup_rounds=1,
    )


def test_packing_10000_messages_beside_building_them(kind: str) -> None:
    spec, messages, budget = big_spec(kind), big_history(kind), quarter_budget(kind)
    chars = sum(len(text) for _, text, _ in spec)
    print(f"\n{kind}: {len(messages):,} messages, {chars / len(messages):.0f} characters a message")
    for backend in ("rust", "python"):
        pack = functools.partial(pack_messages, messages, skeleton_budget=budget, backend=backend)
        build_time, callable_time, o200k_time = best_times(
            lambda: build(spec),
            lambda: pack(token_counter=content_tokens),  # noqa: B023  (timed in this turn)
            lambda: pack(token_counter=COUNTER),  # noqa: B023
        )
        print(
            f"{backend:>6}: building {build_time * 1e3:.1f} ms; pack_messages with a callable "
            f"counter {callable_time * 1e3:.1f} ms ({callable_time / build_time:.2f}x), "
            f"counting o200k_base {o200k_time * 1e3:.1f} ms ({o200k_time / build_time:.2f}x)"
        )
        # The adapter's own work (shapes, tool groups, selection, the messages picked out);
        # counting the text is the tokenizer's, and grows with the text, not the messages.
        assert callable_time <= 2 * build_time


def test_a_runnable_on_a_history_grown_by_a_turn_beside_building_it(kind: str) -> None:
    """A chain sends the history again each turn, grown: the Runnable counts only the new
    messages."""
    spec, messages, budget = big_spec(kind), big_history(kind), quarter_budget(kind)
    earlier = messages[:-50]

    def grown_call() -> float:
        packer = pack_messages(skeleton_budget=budget, token_counter=COUNTER)
        packer.invoke(earlier)
        started = time.perf_counter()
        packer.invoke(messages)
        return time.perf_counter() - started

    (build_time,) = best_times(lambda: build(spec))
    grown_time = min(grown_call() for _ in range(5))
    print(
        f"\n{kind}: building {build_time * 1e3:.1f} ms; the Runnable on the history grown by "
        f"50 messages {grown_time * 1e3:.1f} ms ({grown_time / build_time:.2f}x)"
    )
    assert grown_time <= 2 * build_time
