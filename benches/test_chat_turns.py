"""The chat packers turn after turn, priced with a prompt cache: `pack_messages(stable=True)`
and `SkeletonHistoryProcessor(stable=True)` against LangChain's `trim_messages` and a plain
pydantic-ai history processor keeping the latest messages that fit, on the same chat.

The chat: a system prompt of about 1,200 tokens, then 200 turns of a question (log-normal
around 40 tokens), an AI message making 0 to 2 tool calls, their results (log-normal around
300 tokens, now and then a few thousand) and an answer (log-normal around 120 tokens); a turn
without calls is a question and its answer. Before each model request (the question, then
the tool results when there were calls) each packer packs the whole conversation so far
into 8,000 tokens. Every message counts its text (o200k_base, the calls' names and JSON
arguments) plus 3, the same counts for all packers.

The packed histories are priced with `estimate_cost` at `CachePricing()` (write 1.25, read
0.1, from 1,024 tokens): each message is one `ContextFragment`, the same for the same message
(its index as id, its text as content). The append-only limit prices each packer's own
requests as if each only appended to the one before (the one before read, the new tokens
written): no packer of the same sizes can do better.

The same chat also goes through a pydantic-ai `Agent` (a `FunctionModel` replaying it),
where `ProcessHistory` keeps each packing as the run's history: the processor is given its
own last output with the new messages, and the agent merges consecutive requests before
sending them. The system prompt is then either in the history (`system_prompt=`, in the
first request) or sent beside it with every request (`instructions=`, the processor's budget
being what it leaves of 8,000). Messages are priced by kind and text there, as the agent
makes new message objects when it merges.

Run with `-s` to see the figures:
    python -m pytest benches/test_chat_turns.py -s -p no:randomly
"""

from __future__ import annotations

import functools
import json
import math
import random
from collections.abc import Callable, Sequence
from statistics import mean
from typing import NamedTuple

import pytest
from support.frameworks import framework
from support.sample_text import PROSE

framework("langchain_core")
framework("pydantic_ai")

from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    trim_messages,
)
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities import ProcessHistory  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from skeleton_compressor import (  # noqa: E402
    CachePricing,
    ContextFragment,
    TokenCounter,
    estimate_cost,
)
from skeleton_compressor.integrations.langchain import pack_messages  # noqa: E402
from skeleton_compressor.integrations.pydantic_ai import (  # noqa: E402
    SkeletonHistoryProcessor,
    message_text,
)

TURNS = 200
BUDGET = 8_000
TARGET = 0.30
STEPS = (0.1, 0.25, 0.5)
PRICING = CachePricing()
COUNTER = TokenCounter("o200k_base")
OVERHEAD = 3
VOCABULARY = PROSE["english"].replace(",", "").replace(";", "").replace(".", "").split()


class Step(NamedTuple):
    """One step of the chat: a question, the AI message's calls (their ids and arguments),
    the calls' results, the answer."""

    question: str
    calls: tuple[tuple[str, str], ...]
    results: tuple[str, ...]
    answer: str


def text_of(rng: random.Random, tokens: float) -> str:
    # o200k_base reads these words as about one token each.
    return " ".join(rng.choice(VOCABULARY) for _ in range(max(1, round(tokens))))


@functools.cache
def chat() -> tuple[str, tuple[Step, ...]]:
    rng = random.Random(40)
    system = text_of(rng, 1_200)
    steps = []
    made = 0
    for _ in range(TURNS):
        question = text_of(rng, rng.lognormvariate(math.log(40), 0.6))
        width = rng.choice((0, 1, 1, 2))
        calls = tuple((f"call_{made + k}", text_of(rng, 6)) for k in range(width))
        made += width
        results = tuple(text_of(rng, rng.lognormvariate(math.log(300), 0.9)) for _ in range(width))
        answer = text_of(rng, rng.lognormvariate(math.log(120), 0.5))
        steps.append(Step(question, calls, results, answer))
    return system, tuple(steps)


# Each framework's conversation, and the points where a model request is made: the number
# of messages sent with each request.


def langchain_chat() -> tuple[list[BaseMessage], list[int]]:
    system, steps = chat()
    messages: list[BaseMessage] = [SystemMessage(system)]
    requests = []
    for step in steps:
        messages.append(HumanMessage(step.question))
        requests.append(len(messages))
        if step.calls:
            calls = [
                {"name": "search", "args": {"query": query}, "id": call_id, "type": "tool_call"}
                for call_id, query in step.calls
            ]
            messages.append(AIMessage("", tool_calls=calls))
            for (call_id, _), result in zip(step.calls, step.results):
                messages.append(ToolMessage(result, tool_call_id=call_id))
            requests.append(len(messages))
        messages.append(AIMessage(step.answer))
    return messages, requests


def pydantic_ai_chat() -> tuple[list[ModelMessage], list[int]]:
    system, steps = chat()
    messages: list[ModelMessage] = []
    requests = []
    for step in steps:
        prompt = UserPromptPart(step.question)
        opening = [SystemPromptPart(system)] if not messages else []
        messages.append(ModelRequest(parts=[*opening, prompt]))
        requests.append(len(messages))
        if step.calls:
            messages.append(
                ModelResponse(
                    parts=[
                        ToolCallPart("search", {"query": query}, tool_call_id=call_id)
                        for call_id, query in step.calls
                    ]
                )
            )
            messages.append(
                ModelRequest(
                    parts=[
                        ToolReturnPart("search", result, tool_call_id=call_id)
                        for (call_id, _), result in zip(step.calls, step.results)
                    ]
                )
            )
            requests.append(len(messages))
        messages.append(ModelResponse(parts=[TextPart(step.answer)]))
    return messages, requests


def langchain_text(message: BaseMessage) -> str:
    text = message.text
    for call in getattr(message, "tool_calls", []):
        text += "\n" + call["name"] + "\n" + json.dumps(call["args"])
    return text


class Chat(NamedTuple):
    """A framework's conversation, where its requests are made, and each message's text,
    tokens and fragment."""

    messages: list[object]
    requests: list[int]
    texts: dict[int, str]
    tokens: dict[int, int]
    fragments: dict[int, ContextFragment]

    def count(self, message: object) -> int:
        return self.tokens[id(message)]


@functools.cache
def prepared(framework_name: str) -> Chat:
    if framework_name == "langchain":
        messages, requests = langchain_chat()
        read: Callable[[object], str] = langchain_text  # type: ignore[assignment]
    else:
        messages, requests = pydantic_ai_chat()  # type: ignore[assignment]
        read = message_text  # type: ignore[assignment]
    texts = [read(message) for message in messages]
    counts = COUNTER.count_many(texts)
    return Chat(
        list(messages),
        requests,
        {id(m): text for m, text in zip(messages, texts)},
        {id(m): count + OVERHEAD for m, count in zip(messages, counts)},
        {
            id(m): ContextFragment(f"m{index}", count + OVERHEAD, 1.0, text)
            for index, (m, text, count) in enumerate(zip(messages, texts, counts))
        },
    )


# The packers: each takes the conversation so far and returns the history it sends.

Packer = Callable[[Chat, list[object]], list[object]]


def ours_langchain(step: float) -> Packer:
    def pack(chat_: Chat, messages: list[object]) -> list[object]:
        return pack_messages(  # type: ignore[return-value]
            messages,  # type: ignore[arg-type]
            skeleton_budget=BUDGET,
            token_counter=chat_.count,
            stable=True,
            stable_step=step,
        )

    return pack


def langchain_default(chat_: Chat, messages: list[object]) -> list[object]:
    return pack_messages(messages, skeleton_budget=BUDGET, token_counter=chat_.count)  # type: ignore[arg-type, return-value]


def trimmed(chat_: Chat, messages: list[object]) -> list[object]:
    return trim_messages(  # type: ignore[return-value]
        messages,  # type: ignore[arg-type]
        strategy="last",
        token_counter=lambda chosen: sum(map(chat_.count, chosen)),
        max_tokens=BUDGET,
        start_on="human",
        include_system=True,
    )


def ours_pydantic_ai(step: float) -> Packer:
    def pack(chat_: Chat, messages: list[object]) -> list[object]:
        processor = SkeletonHistoryProcessor(BUDGET, chat_.count, stable=True, stable_step=step)
        return processor(messages)  # type: ignore[arg-type, return-value]

    return pack


def pydantic_ai_default(chat_: Chat, messages: list[object]) -> list[object]:
    return SkeletonHistoryProcessor(BUDGET, chat_.count)(messages)  # type: ignore[arg-type, return-value]


def keep_recent(chat_: Chat, messages: list[object]) -> list[object]:
    return keep_recent_by(chat_.count, messages)


def keep_recent_by(
    count: Callable[[object], int],
    messages: list[object],
    budget: int = BUDGET,
    keep_first: bool = True,
) -> list[object]:
    """A plain history processor, as a user writes one: the first request (when it holds the
    system prompt), then the latest messages that fit, starting on a request with a user
    prompt (the current turn's, when no later one is left: the model must see the returns
    of the calls it just made)."""
    head = 1 if keep_first else 0
    room = budget - sum(map(count, messages[:head]))
    start = len(messages)
    while start > head and count(messages[start - 1]) <= room:
        start -= 1
        room -= count(messages[start])
    if start == head:
        return list(messages)
    turns = [
        index
        for index, message in enumerate(messages)
        if index >= head
        and isinstance(message, ModelRequest)
        and any(isinstance(part, UserPromptPart) for part in message.parts)
        and not any(isinstance(part, ToolReturnPart) for part in message.parts)
    ]
    later = [index for index in turns if index >= start]
    earlier = [index for index in turns if index < start]
    begin = later[0] if later else earlier[-1] if earlier else len(messages) - 1
    return [*messages[:head], *messages[begin:]]


class Run(NamedTuple):
    requests: list[tuple[ContextFragment, ...]]

    @property
    def cost(self) -> float:
        return estimate_cost(self.requests, PRICING).ratio

    @property
    def billed(self) -> float:
        """The tokens billed a request, in uncached input tokens."""
        return estimate_cost(self.requests, PRICING).billed / len(self.requests)

    @property
    def kept(self) -> float:
        """The mean share of the budget a request takes."""
        return mean(sum(f.token_count for f in request) for request in self.requests) / BUDGET

    @property
    def breaks(self) -> int:
        """Requests that do not start with the whole request before them."""
        return sum(
            now[: len(before)] != before for before, now in zip(self.requests, self.requests[1:])
        )

    @property
    def append_only_limit(self) -> float:
        """Each request reads the one before and writes only what it adds."""
        tokens = [sum(f.token_count for f in request) for request in self.requests]
        billed = tokens[0] * PRICING.write
        for before, now in zip(tokens, tokens[1:]):
            billed += PRICING.read * min(before, now) + PRICING.write * max(0, now - before)
        return billed / sum(tokens)


def valid_langchain(history: Sequence[object]) -> bool:
    """Whether the history starts on a human message after the system one, and each tool
    message answers a call of the AI message before its block, every call answered."""
    rest = [m for m in history if not isinstance(m, SystemMessage)]
    if rest and not isinstance(rest[0], HumanMessage):
        return False
    pending: set[str] = set()
    for message in history:
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in pending:
                return False
            pending.discard(message.tool_call_id)
            continue
        if pending:
            return False
        pending = {call["id"] for call in getattr(message, "tool_calls", [])}
    return not pending


def valid_pydantic_ai(history: Sequence[object]) -> bool:
    """Whether the history starts on a request, and each request answers all the calls of
    the response before it and nothing else."""
    if not history or not isinstance(history[0], ModelRequest):
        return False
    expected: set[str] = set()
    for message in history:
        parts = message.parts  # type: ignore[attr-defined]
        if isinstance(message, ModelRequest):
            if {p.tool_call_id for p in parts if isinstance(p, ToolReturnPart)} != expected:
                return False
            expected = set()
        else:
            expected = {p.tool_call_id for p in parts if isinstance(p, ToolCallPart)}
    return not expected


VALID = {"langchain": valid_langchain, "pydantic-ai": valid_pydantic_ai}


@functools.cache
def run(framework_name: str, packer_name: str) -> Run:
    chat_ = prepared(framework_name)
    pack = PACKERS[framework_name][packer_name]
    sent = []
    for size in chat_.requests:
        history = pack(chat_, chat_.messages[:size])
        assert sum(map(chat_.count, history)) <= BUDGET
        assert VALID[framework_name](history), (packer_name, size)
        sent.append(tuple(chat_.fragments[id(message)] for message in history))
    return Run(sent)


PACKERS: dict[str, dict[str, Packer]] = {
    "langchain": {
        **{f"pack_messages(stable=True, stable_step={s})": ours_langchain(s) for s in STEPS},
        "pack_messages() (relevance, the default)": langchain_default,
        'trim_messages(strategy="last", start_on="human")': trimmed,
    },
    "pydantic-ai": {
        **{
            f"SkeletonHistoryProcessor(stable=True, stable_step={s})": ours_pydantic_ai(s)
            for s in STEPS
        },
        "SkeletonHistoryProcessor() (relevance, the default)": pydantic_ai_default,
        "keep_recent (the latest messages that fit)": keep_recent,
    },
}
RIVALS = {
    "langchain": 'trim_messages(strategy="last", start_on="human")',
    "pydantic-ai": "keep_recent (the latest messages that fit)",
}
OURS = {
    "langchain": "pack_messages(stable=True, stable_step=0.25)",
    "pydantic-ai": "SkeletonHistoryProcessor(stable=True, stable_step=0.25)",
}


# pydantic-ai through an Agent: ProcessHistory keeps each packing as the run's history, so a
# processor is given its own last output with the new messages after it, and the agent
# merges consecutive requests before sending them. A FunctionModel replays the chat. The
# system prompt goes in the history (`system_prompt=`, in the first request) or beside it
# (`instructions=`, sent with every request and not counted by the processor, whose budget
# is then what the instructions leave of BUDGET).

AgentProcessor = Callable[[Callable[[ModelMessage], int], int, bool], object]
AGENT_PROCESSORS: dict[str, AgentProcessor] = {
    "SkeletonHistoryProcessor(stable=True, stable_step=0.25)": lambda count, budget, _: (
        SkeletonHistoryProcessor(budget, count, stable=True, stable_step=0.25)
    ),
    "SkeletonHistoryProcessor() (relevance, the default)": lambda count, budget, _: (
        SkeletonHistoryProcessor(budget, count)
    ),
    "keep_recent (the latest messages that fit)": lambda count, budget, keep_first: (
        lambda messages: keep_recent_by(count, messages, budget, keep_first)  # type: ignore[arg-type]
    ),
}


def counted(message: ModelMessage) -> int:
    return _count_text(message_text(message))


@functools.cache
def _count_text(text: str) -> int:
    return COUNTER.count(text) + OVERHEAD


def as_fragment(message: ModelMessage) -> ContextFragment:
    """The same fragment for messages of the same kind and text (what a provider is sent)."""
    text = message_text(message)
    return ContextFragment(f"{message.kind}:{text}", counted(message), 1.0, text)


@functools.cache
def agent_run(packer_name: str, instructions: bool = False) -> Run:
    system, steps = chat()
    system_fragment = ContextFragment("instructions", _count_text(system), 1.0, system)
    leading = (system_fragment,) if instructions else ()
    budget = BUDGET - system_fragment.token_count if instructions else BUDGET
    results = {
        query: result for step in steps for (_, query), result in zip(step.calls, step.results)
    }
    sent: list[tuple[ContextFragment, ...]] = []
    current: list[Step] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        request = (*leading, *map(as_fragment, messages))
        assert sum(fragment.token_count for fragment in request) <= BUDGET
        assert valid_pydantic_ai(messages), (packer_name, len(sent))
        sent.append(request)
        step = current[0]
        last = messages[-1]
        if step.calls and not any(isinstance(p, ToolReturnPart) for p in last.parts):
            return ModelResponse(
                parts=[
                    ToolCallPart("search", {"query": query}, tool_call_id=call_id)
                    for call_id, query in step.calls
                ]
            )
        return ModelResponse(parts=[TextPart(step.answer)])

    processor = AGENT_PROCESSORS[packer_name](counted, budget, not instructions)
    prompt = {"instructions": system} if instructions else {"system_prompt": system}
    agent = Agent(
        FunctionModel(respond),
        capabilities=[ProcessHistory(processor)],  # type: ignore[arg-type]
        **prompt,  # type: ignore[arg-type]
    )

    @agent.tool_plain
    def search(query: str) -> str:
        return results[query]

    history: list[ModelMessage] = []
    for step in steps:
        current[:] = [step]
        history = agent.run_sync(step.question, message_history=history).all_messages()
    return Run(sent)


def print_agent_table() -> None:
    print(f"\npydantic-ai through an Agent (ProcessHistory), {TURNS} turns, budget {BUDGET:,}")
    print(
        f"{'packer':<58} {'cost':>6} {'limit':>6} {'kept':>6} {'billed':>7} {'breaks':>6} "
        f"{'first':>6}"
    )
    for instructions in (False, True):
        print("the system prompt as " + ("instructions=" if instructions else "system_prompt="))
        for name in AGENT_PROCESSORS:
            result = agent_run(name, instructions)
            print(
                f"{name:<58} {result.cost:6.3f} {result.append_only_limit:6.3f} "
                f"{result.kept:6.1%} {result.billed:7.0f} {result.breaks:6} "
                f"{result.requests[-1][0].token_count:>6}"
            )


def print_table(framework_name: str) -> None:
    chat_ = prepared(framework_name)
    total = sum(map(chat_.count, chat_.messages))
    print(
        f"\n{framework_name}: {TURNS} turns, {len(chat_.messages)} messages, {total:,} tokens, "
        f"{len(chat_.requests)} requests, budget {BUDGET:,}"
    )
    print(f"{'packer':<58} {'cost':>6} {'limit':>6} {'kept':>6} {'billed':>7} {'breaks':>6}")
    for name in PACKERS[framework_name]:
        result = run(framework_name, name)
        print(
            f"{name:<58} {result.cost:6.3f} {result.append_only_limit:6.3f} "
            f"{result.kept:6.1%} {result.billed:7.0f} {result.breaks:6}"
        )


@pytest.mark.parametrize("framework_name", sorted(PACKERS))
def test_stable_packing_is_billed_at_most_the_target(framework_name: str) -> None:
    print_table(framework_name)
    ours = run(framework_name, OURS[framework_name])
    assert ours.cost <= TARGET, f"{ours.cost:.3f}x > {TARGET}x"
    theirs = run(framework_name, RIVALS[framework_name])
    assert ours.cost < theirs.cost and ours.billed < theirs.billed


def test_breaks_are_at_most_one_per_step_of_conversation() -> None:
    for framework_name, name in OURS.items():
        chat_ = prepared(framework_name)
        total = sum(map(chat_.count, chat_.messages))
        step = math.floor(0.25 * BUDGET)
        assert run(framework_name, name).breaks <= math.ceil(total / step)


@pytest.mark.parametrize("instructions", [False, True], ids=["system_prompt", "instructions"])
def test_through_an_agent_the_stable_processor_is_billed_at_most_the_target(
    instructions: bool,
) -> None:
    if instructions:
        print_agent_table()
    ours = agent_run("SkeletonHistoryProcessor(stable=True, stable_step=0.25)", instructions)
    theirs = agent_run("keep_recent (the latest messages that fit)", instructions)
    assert len(ours.requests) == len(theirs.requests) == len(prepared("pydantic-ai").requests)
    assert ours.cost <= TARGET, f"{ours.cost:.3f}x > {TARGET}x"
    assert ours.cost < theirs.cost and ours.billed < theirs.billed
