"""The pydantic-ai history processor on a 10,000-message conversation (user turns, parallel
tool calls and their returns, replies), beside building those 10,000 message objects: the
adapter is to cost at most twice what making the framework's own objects costs."""

from __future__ import annotations

import functools

import pytest

pytest.importorskip("pydantic_ai", reason="the adapters' frameworks need Python 3.11 or newer")

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from skeleton_compressor import TokenCounter
from skeleton_compressor.integrations.pydantic_ai import (
    SkeletonHistoryProcessor,
    message_text,
)

MESSAGES = 10_000
GROUP = "pydantic-ai history of 10,000 messages"
WORDS = [
    "the",
    "plan",
    "splits",
    "into",
    "subplans",
    "and",
    "each",
    "child",
    "inherits",
    "context",
    "from",
    "its",
    "parent",
]


def _words(count: int, seed: int) -> str:
    return " ".join(WORDS[(seed + i) % len(WORDS)] for i in range(count))


def build(texts: list[str]) -> list[ModelMessage]:
    """The conversation: the system prompt, then turns of a question, two parallel calls,
    their returns and a reply; the last turn is waiting for its reply, as when the agent asks
    the model again."""
    messages: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart("Answer from the tools' results.")])
    ]
    turns = len(texts) // 4
    for turn in range(turns):
        question, args, result, answer = texts[4 * turn : 4 * turn + 4]
        messages.append(ModelRequest(parts=[UserPromptPart(question)]))
        first, second = f"call-{turn}-a", f"call-{turn}-b"
        messages.append(
            ModelResponse(
                parts=[
                    ToolCallPart("search", {"query": args}, tool_call_id=first),
                    ToolCallPart("fetch", {"url": args}, tool_call_id=second),
                ]
            )
        )
        messages.append(
            ModelRequest(
                parts=[
                    ToolReturnPart("search", result, tool_call_id=first),
                    ToolReturnPart("fetch", result, tool_call_id=second),
                ]
            )
        )
        if turn < turns - 1:
            messages.append(ModelResponse(parts=[TextPart(answer)]))
    return messages


@functools.cache
def texts() -> list[str]:
    sizes = (30, 8, 120, 60)  # words of a question, the calls' arguments, a result, a reply
    return [_words(sizes[index % 4], index) for index in range(MESSAGES)]


@functools.cache
def history() -> list[ModelMessage]:
    messages = build(texts())
    assert len(messages) == MESSAGES
    return messages


@functools.cache
def tenth_of_tokens() -> int:
    counter = TokenCounter()
    return sum(counter.count_many([message_text(message) for message in history()])) // 10


def test_build_the_messages(benchmark) -> None:  # type: ignore[no-untyped-def]
    benchmark.group = GROUP
    source = texts()
    benchmark.pedantic(lambda: build(source), rounds=5, warmup_rounds=1)


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_processor_first_call(benchmark, backend: str) -> None:  # type: ignore[no-untyped-def]
    """A new processor each round: every message's text is made and counted (o200k_base, as
    a TokenCounter so that the Python backend counts in the extension too)."""
    benchmark.group = GROUP
    messages = history()

    def new_processor() -> tuple[tuple[SkeletonHistoryProcessor], dict[str, object]]:
        return (SkeletonHistoryProcessor(tenth_of_tokens(), TokenCounter(), backend=backend),), {}

    kept = benchmark.pedantic(
        lambda processor: processor(messages), setup=new_processor, rounds=5, warmup_rounds=1
    )
    assert kept[-1] is messages[-1]
    assert 0 < len(kept) < MESSAGES


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_processor_called_again(benchmark, backend: str) -> None:  # type: ignore[no-untyped-def]
    """The same processor on the same history, as before each model request of an agent
    run: the counts are remembered, the rest is done again."""
    benchmark.group = GROUP
    messages = history()
    processor = SkeletonHistoryProcessor(tenth_of_tokens(), TokenCounter(), backend=backend)
    processor(messages)
    kept = benchmark.pedantic(lambda: processor(messages), rounds=5, warmup_rounds=1)
    assert 0 < len(kept) < MESSAGES


def test_processor_with_a_callable_counter(benchmark) -> None:  # type: ignore[no-untyped-def]
    """Counting left to a callable on each message (a constant one here): the processor's
    own work."""
    benchmark.group = GROUP
    messages = history()
    processor = SkeletonHistoryProcessor(MESSAGES * 10, lambda message: 100)
    kept = benchmark.pedantic(lambda: processor(messages), rounds=5, warmup_rounds=1)
    assert 0 < len(kept) < MESSAGES


def test_processor_keeps_everything(benchmark) -> None:  # type: ignore[no-untyped-def]
    """A budget that holds the whole history: all 10,000 messages come back."""
    benchmark.group = GROUP
    messages = history()

    def new_processor() -> tuple[tuple[SkeletonHistoryProcessor], dict[str, object]]:
        return (SkeletonHistoryProcessor(10**9, backend="rust"),), {}

    kept = benchmark.pedantic(
        lambda processor: processor(messages), setup=new_processor, rounds=5, warmup_rounds=1
    )
    assert kept == messages
