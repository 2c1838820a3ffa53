"""The pydantic-ai history processor against the real pydantic-ai: hand-checked packings, real
Agent runs offline (FunctionModel, TestModel) with the processor installed through
`ProcessHistory`, fuzzed histories judged by a validity checker of this file's own, and bad
input. Every behaviour runs on both backends."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import images
from support.frameworks import framework

framework("pydantic_ai")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities import ProcessHistory  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    AudioUrl,
    BinaryContent,
    BinaryImage,
    CachePoint,
    CompactionPart,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryInfo,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
    VideoUrl,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402
from skeleton_compressor import BudgetExceededError, TokenCounter  # noqa: E402
from skeleton_compressor.errors import FragmentTypeError, FragmentValueError  # noqa: E402
from skeleton_compressor.integrations._media import image_tokens  # noqa: E402
from skeleton_compressor.integrations._packing import Packing  # noqa: E402
from skeleton_compressor.integrations.pydantic_ai import (  # noqa: E402
    DEFAULT_MEDIA_TOKENS,
    PackedHistory,
    SkeletonHistoryProcessor,
    message_media_tokens,
    message_text,
)

# --- building histories -------------------------------------------------------------------


def ask(text: str, *, system: str | None = None) -> ModelRequest:
    parts = [SystemPromptPart(system)] if system else []
    return ModelRequest(parts=[*parts, UserPromptPart(text)])


def call(*ids: str) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart("lookup", {"id": i}, tool_call_id=i) for i in ids])


def answer(*ids: str, prompt: str | None = None) -> ModelRequest:
    parts: list[object] = [ToolReturnPart("lookup", f"result {i}", tool_call_id=i) for i in ids]
    if prompt is not None:
        parts.append(UserPromptPart(prompt))
    return ModelRequest(parts=parts)  # type: ignore[arg-type]


def reply(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(text)])


def costing(*pairs: tuple[ModelMessage, int]) -> tuple[list[ModelMessage], Callable[..., int]]:
    """The messages, and a token counter giving each the count written beside it."""
    table = {id(message): tokens for message, tokens in pairs}
    return [message for message, _ in pairs], lambda message: table[id(message)]


def positions(messages: Sequence[ModelMessage], kept: Sequence[ModelMessage]) -> list[int]:
    """Where each kept message sits in `messages`, asserting it is the very object."""
    where = {id(message): index for index, message in enumerate(messages)}
    found = [where[id(message)] for message in kept]
    assert all(kept[k] is messages[i] for k, i in enumerate(found))
    return found


def signature(message: ModelMessage) -> str:
    """A message as the tests write it: Q for a request, A for a response, then its parts."""
    shown = []
    for part in message.parts:
        if isinstance(part, SystemPromptPart):
            shown.append(f"system:{part.content}")
        elif isinstance(part, UserPromptPart):
            shown.append(f"user:{part.content}")
        elif isinstance(part, ToolCallPart):
            shown.append(f"call:{part.tool_call_id}")
        elif isinstance(part, ToolReturnPart):
            shown.append(f"return:{part.tool_call_id}")
        elif isinstance(part, TextPart):
            shown.append(f"text:{part.content}")
        else:
            shown.append(part.part_kind)
    return ("Q " if isinstance(message, ModelRequest) else "A ") + " ".join(shown)


# --- a validity checker written from pydantic-ai's rules, not from _history.py -------------


def answered_ids(message: ModelMessage) -> list[str]:
    if not isinstance(message, ModelRequest):
        return []
    return [
        part.tool_call_id
        for part in message.parts
        if isinstance(part, ToolReturnPart)
        or (isinstance(part, RetryPromptPart) and part.tool_name is not None)
    ]


def called_ids(message: ModelMessage) -> list[str]:
    if not isinstance(message, ModelResponse):
        return []
    return [part.tool_call_id for part in message.parts if isinstance(part, ToolCallPart)]


def has_user_prompt(message: ModelMessage) -> bool:
    return isinstance(message, ModelRequest) and any(
        isinstance(part, UserPromptPart) for part in message.parts
    )


def must_keep(messages: Sequence[ModelMessage]) -> set[int]:
    """The messages a packing keeps whatever the budget, for histories where each response's
    calls are answered by the request right after it: the last message, the requests with a
    system prompt, the latest request with a user prompt, each one's tool partner, and the
    latest request answering nothing before them when they would start elsewhere."""
    last = len(messages) - 1
    pins = {last}
    pins |= {
        index
        for index, message in enumerate(messages)
        if isinstance(message, ModelRequest)
        and any(isinstance(part, SystemPromptPart) for part in message.parts)
    }
    users = [index for index, message in enumerate(messages) if has_user_prompt(message)]
    if users:
        pins.add(users[-1])
    closure = set(pins)
    for index in pins:
        if answered_ids(messages[index]):
            closure.add(index - 1)
        if called_ids(messages[index]) and index < last:
            closure.add(index + 1)
    first = min(closure)
    if not isinstance(messages[first], ModelRequest) or answered_ids(messages[first]):
        starts = [
            index
            for index in range(first)
            if isinstance(messages[index], ModelRequest) and not answered_ids(messages[index])
        ]
        with_prompt = [index for index in starts if has_user_prompt(messages[index])]
        closure.add((with_prompt or starts)[-1])
    return closure


def assert_valid(kept: Sequence[ModelMessage]) -> None:
    """The history a model can be sent: it starts with a request, every tool return answers a
    call of the response right before it, every call of a kept response is answered by the
    request right after it."""
    assert kept, "the packed history is empty"
    assert isinstance(kept[0], ModelRequest), signature(kept[0])
    for position, message in enumerate(kept):
        answered = answered_ids(message)
        if answered:
            before = kept[position - 1] if position else None
            assert before is not None and set(answered) <= set(called_ids(before)), position
        calls = called_ids(message)
        if calls:
            assert position + 1 < len(kept), "a kept call is left unanswered at the end"
            assert set(calls) <= set(answered_ids(kept[position + 1])), position


# --- hand-checked packings ----------------------------------------------------------------


def tool_turns() -> tuple[list[ModelMessage], Callable[..., int]]:
    return costing(
        (ask("q1", system="be brief"), 5),  # 0: pinned, the system prompt
        (call("c1"), 3),  # 1: with 2, one unit of 23 tokens
        (answer("c1"), 20),  # 2
        (reply("a1"), 4),  # 3
        (ask("q2"), 2),  # 4: pinned, the latest user prompt and the last message
    )


@pytest.mark.parametrize(
    ("budget", "expected"),
    [
        (0, [0, 4]),
        (7, [0, 4]),
        (10, [0, 4]),
        (11, [0, 3, 4]),
        (33, [0, 3, 4]),
        (34, [0, 1, 2, 3, 4]),
    ],
)
def test_a_tool_call_is_kept_or_dropped_with_its_return(
    backend: str, budget: int, expected: list[int]
) -> None:
    messages, tokens = tool_turns()
    processor = SkeletonHistoryProcessor(budget, tokens, backend=backend)
    assert positions(messages, processor(messages)) == expected


def test_a_relevance_callable_ranks_a_tool_unit_by_its_best_member(backend: str) -> None:
    messages, tokens = tool_turns()
    scores = dict(zip(map(id, messages), [0.1, 0.9, 0.1, 0.5, 0.2]))

    def relevance(message: ModelMessage) -> float:
        return scores[id(message)]

    def kept(budget: int, strategy: str = "greedy") -> list[int]:
        processor = SkeletonHistoryProcessor(
            budget, tokens, relevance=relevance, strategy=strategy, backend=backend
        )
        return positions(messages, processor(messages))

    assert kept(30) == [0, 1, 2, 4]
    assert kept(29) == [0, 3, 4]
    assert kept(29, "prefix") == [0, 4]


def test_recency_and_min_relevance(backend: str) -> None:
    # Recency scores message i of 5 (i + 1) / 5: 0.2, 0.4, 0.6, 0.8, 1.0.
    messages, tokens = tool_turns()
    processor = SkeletonHistoryProcessor(100, tokens, min_relevance=0.7, backend=backend)
    assert positions(messages, processor(messages)) == [0, 3, 4]
    processor = SkeletonHistoryProcessor(100, tokens, min_relevance=0.6, backend=backend)
    assert positions(messages, processor(messages)) == [0, 1, 2, 3, 4]


def user_prompt_beside_returns() -> tuple[list[ModelMessage], Callable[..., int]]:
    return costing(
        (ask("q1"), 2),  # 0
        (reply("a1"), 2),  # 1
        (ask("q2"), 2),  # 2: pinned, so that the pinned messages start on a request
        (call("c1", "c2"), 4),  # 3: pinned with 4, whose returns answer it
        (answer("c2", "c1", prompt="and also"), 6),  # 4: the latest user prompt, the last
    )


@pytest.mark.parametrize(
    ("budget", "expected"),
    [
        (12, [2, 3, 4]),
        (13, [2, 3, 4]),
        (14, [0, 2, 3, 4]),
        (15, [0, 2, 3, 4]),
        (16, [0, 1, 2, 3, 4]),
    ],
)
def test_a_user_prompt_beside_tool_returns_keeps_the_call_and_the_turn_before(
    backend: str, budget: int, expected: list[int]
) -> None:
    # At 14 the first choice, [1, 2, 3, 4], would start on a response: the history starts on
    # the turn of 1 instead, and 1 no longer fits beside it.
    messages, tokens = user_prompt_beside_returns()
    processor = SkeletonHistoryProcessor(budget, tokens, backend=backend)
    assert positions(messages, processor(messages)) == expected


def test_pinned_messages_over_the_budget_follow_on_overflow(backend: str) -> None:
    messages, tokens = user_prompt_beside_returns()
    packed = SkeletonHistoryProcessor(11, tokens, backend=backend).pack(messages)
    assert positions(messages, packed.messages) == [2, 3, 4]
    assert packed.metadata.compressed_tokens == 12
    assert packed.metadata.over_budget
    for on_overflow in ("strict", "raise"):
        processor = SkeletonHistoryProcessor(11, tokens, on_overflow=on_overflow, backend=backend)
        with pytest.raises(BudgetExceededError) as raised:
            processor(messages)
        assert (raised.value.skeleton_budget, raised.value.needed_tokens) == (11, 12)


@pytest.mark.parametrize(
    ("budget", "expected"),
    [(3, [4, 5, 6]), (4, [0, 4, 5, 6]), (5, [0, 3, 4, 5, 6]), (7, [0, 1, 2, 3, 4, 5, 6])],
)
def test_call_ids_reused_across_responses_pair_by_position(
    backend: str, budget: int, expected: list[int]
) -> None:
    # Some providers (and TestModel) give every response's first call the same id. At 4 the
    # first choice, [3, 4, 5, 6], starts on a response, and the turn of 3 fits beside the
    # pinned messages.
    messages, tokens = costing(
        (ask("q1"), 1),
        (call("call_0"), 1),
        (answer("call_0"), 1),
        (reply("a1"), 1),
        (ask("q2"), 1),
        (call("call_0"), 1),
        (answer("call_0"), 1),
    )
    processor = SkeletonHistoryProcessor(budget, tokens, backend=backend)
    assert positions(messages, processor(messages)) == expected


def retries() -> tuple[list[ModelMessage], Callable[..., int]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # RetryPromptPart is deprecated, still read
        retry_prompt = RetryPromptPart("bad id", tool_name="lookup", tool_call_id="c1")
    return costing(
        (ask("q"), 1),  # 0: pinned
        (call("c1"), 1),
        (ModelRequest(parts=[retry_prompt]), 1),  # answers c1
        (call("c2"), 1),
        (
            ModelRequest(
                parts=[
                    ToolReturnPart("lookup", "bad id again", tool_call_id="c2", outcome="retried")
                ]
            ),
            1,
        ),
        (call("c3"), 1),
        (answer("c3"), 1),
        (reply("not the output"), 1),
        # Answers no call: the feedback on a response as a whole.
        (ModelRequest(parts=[RetryFeedbackPart("try again", retry=RetryInfo("no_output"))]), 1),
    )


@pytest.mark.parametrize(
    ("budget", "expected"),
    [
        (2, [0, 8]),
        (3, [0, 7, 8]),
        (4, [0, 7, 8]),
        (5, [0, 5, 6, 7, 8]),
        (7, [0, 3, 4, 5, 6, 7, 8]),
        (9, [0, 1, 2, 3, 4, 5, 6, 7, 8]),
    ],
)
def test_retries_answer_their_calls(backend: str, budget: int, expected: list[int]) -> None:
    messages, tokens = retries()
    processor = SkeletonHistoryProcessor(budget, tokens, backend=backend)
    assert positions(messages, processor(messages)) == expected


def test_native_tool_parts_stay_inside_their_response(backend: str) -> None:
    searched = ModelResponse(
        parts=[
            NativeToolCallPart("web_search", {"query": "x"}, tool_call_id="n1"),
            NativeToolReturnPart("web_search", "found", tool_call_id="n1"),
            TextPart("a1"),
        ]
    )
    messages, tokens = costing((ask("q1"), 1), (searched, 1), (ask("q2"), 1))
    for budget, expected in ((2, [0, 2]), (3, [0, 1, 2])):
        processor = SkeletonHistoryProcessor(budget, tokens, backend=backend)
        assert positions(messages, processor(messages)) == expected


def test_the_last_message_is_kept_with_its_call_during_a_tool_loop(backend: str) -> None:
    messages, tokens = costing(
        (ask("q", system="s"), 1),
        (call("a"), 1),
        (answer("a"), 1),
        (call("b"), 1),
        (answer("b"), 1),
    )
    for budget, expected in ((0, [0, 3, 4]), (3, [0, 3, 4]), (4, [0, 3, 4]), (5, [0, 1, 2, 3, 4])):
        processor = SkeletonHistoryProcessor(budget, tokens, backend=backend)
        assert positions(messages, processor(messages)) == expected


def test_a_suspended_response_being_continued_is_kept(backend: str) -> None:
    suspended = ModelResponse(parts=[TextPart("half")], state="suspended")
    messages, tokens = costing((ask("q1"), 1), (reply("a1"), 1), (ask("q2"), 1), (suspended, 1))
    processor = SkeletonHistoryProcessor(0, tokens, backend=backend)
    assert positions(messages, processor(messages)) == [2, 3]


def test_a_compaction_summary_opens_a_turn(backend: str) -> None:
    summary = ModelRequest(parts=[CompactionPart("earlier: the user asked for a plan")])
    messages, tokens = costing((summary, 3), (reply("a1"), 1), (ask("q2"), 1))
    for budget, expected in ((1, [2]), (4, [0, 2]), (5, [0, 1, 2])):
        processor = SkeletonHistoryProcessor(budget, tokens, backend=backend)
        assert positions(messages, processor(messages)) == expected


def test_a_history_of_no_tokens_started_again_on_a_turn(backend: str) -> None:
    # A request-scoped system prompt is not pinned and opens no turn: the history starts on
    # the turn after it, and the ratio of no tokens to no tokens is 1.0.
    note = ModelRequest(parts=[SystemPromptPart("budget left: 3", scope="request")])
    messages, tokens = costing((note, 0), (reply("a1"), 0), (ask("q2"), 0))
    packed = SkeletonHistoryProcessor(1, tokens, backend=backend).pack(messages)
    assert positions(messages, packed.messages) == [2]
    assert (packed.metadata.original_tokens, packed.metadata.ratio) == (0, 1.0)


def test_a_turn_pinned_below_min_relevance_is_kept_with_its_value(backend: str) -> None:
    # The first choice starts on 2, which opens no turn; the turn before, 0, scores 1/7,
    # below min_relevance, and is pinned to start the history.
    feedback = RetryFeedbackPart("again", retry=RetryInfo("no_output"))
    messages, tokens = costing(
        (ask("q0"), 0),
        (reply("unusable"), 0),
        (ModelRequest(parts=[feedback]), 0),
        (reply("a0"), 0),
        (ask("q1"), 0),
        (reply("unusable"), 0),
        (ModelRequest(parts=[feedback]), 1),
    )
    processor = SkeletonHistoryProcessor(1, tokens, min_relevance=0.3, backend=backend)
    packed = processor.pack(messages)
    assert positions(messages, packed.messages) == [0, 2, 3, 4, 5, 6]
    assert packed.metadata.value_kept is not None and packed.metadata.value_bound is not None
    assert packed.metadata.value_kept <= packed.metadata.value_bound


def test_pack_returns_the_metadata_the_processor_keeps(backend: str) -> None:
    messages, tokens = tool_turns()
    processor = SkeletonHistoryProcessor(11, tokens, backend=backend)
    assert processor.last_metadata is None
    packed = processor.pack(messages)
    assert isinstance(packed, PackedHistory)
    assert positions(messages, packed.messages) == [0, 3, 4]
    metadata = packed.metadata
    assert processor.last_metadata == metadata
    assert (metadata.original_tokens, metadata.compressed_tokens) == (34, 11)
    assert (metadata.fragments_total, metadata.fragments_kept) == (5, 3)
    assert (metadata.skeleton_budget, metadata.over_budget) == (11, False)
    assert processor.pack(()).messages == []
    assert processor.last_metadata is not None
    assert processor.last_metadata.fragments_total == 0


# --- counting -----------------------------------------------------------------------------


def test_a_tool_return_reads_as_pydantic_ai_renders_it() -> None:
    class Shouted(ToolReturnPart):
        def model_response_str(self, *, wrap_if_error: bool = True) -> str:
            return str(self.content).upper()

    parts = [
        ToolReturnPart("lookup", "plain", tool_call_id="c1"),
        ToolReturnPart("lookup", "not allowed", tool_call_id="c2", outcome="denied"),
        ToolReturnPart("lookup", "bad id", tool_call_id="c3", outcome="retried"),
        Shouted("lookup", "quiet", tool_call_id="c4"),
    ]
    assert message_text(ModelRequest(parts=parts)) == (
        'plain\nnot allowed\n{"error":"bad id"}\nQUIET'
    )
    assert [message_text(ModelRequest(parts=[part])) for part in parts] == [
        part.model_response_str() for part in parts
    ]


def test_message_text_is_what_the_model_is_sent() -> None:
    request = ModelRequest(
        parts=[
            SystemPromptPart("be brief"),
            UserPromptPart(["look:", ImageUrl("https://example.com/a.png"), TextContent("here")]),
            ToolReturnPart("lookup", {"hits": 2}, tool_call_id="c1"),
            ToolReturnPart("lookup", "no such id", tool_call_id="c2", outcome="failed"),
            CompactionPart("earlier: greetings"),
        ],
        instructions="not counted",
    )
    assert message_text(request) == (
        'be brief\nlook:\nhere\n{"hits":2}\n{"error":"no such id"}\nearlier: greetings'
    )
    response = ModelResponse(
        parts=[
            ThinkingPart("hmm"),
            ToolCallPart("lookup", '{"id": "a"}', tool_call_id="c3"),
            TextPart("done"),
        ]
    )
    assert message_text(response) == 'hmm\nlookup\n{"id":"a"}\ndone'
    feedback = ModelRequest(parts=[RetryFeedbackPart("Fix it.", retry=RetryInfo("no_output"))])
    assert message_text(feedback) == (
        "Your previous response failed the application's validation "
        "(this is automated feedback, not a message from the user):\n"
        "<pyai:retry_feedback>\nFix it.\n</pyai:retry_feedback>"
    )


def test_a_token_counter_counts_message_text(backend: str) -> None:
    counter = TokenCounter("cl100k_base")
    messages, _ = tool_turns()
    packed = SkeletonHistoryProcessor(10**6, counter, backend=backend).pack(messages)
    expected = sum(counter.count(message_text(message)) for message in messages)
    assert packed.metadata.original_tokens == expected
    assert packed.messages == messages


def test_counts_are_remembered_only_for_the_same_message_and_parts(backend: str) -> None:
    counter = TokenCounter("o200k_base")
    processor = SkeletonHistoryProcessor(10**6, counter, backend=backend)

    def counted(messages: list[ModelMessage]) -> int:
        return processor.pack(messages).metadata.original_tokens

    def fresh(messages: list[ModelMessage]) -> int:
        return sum(counter.count(message_text(message)) for message in messages)

    messages = [ask("q1"), reply("a1"), ask("q2")]
    assert counted(messages) == fresh(messages)
    # pydantic-ai's way to change a message: a new parts list.
    messages[1].parts = [TextPart("a much longer answer than the first one")]
    assert counted(messages) == fresh(messages) > 5
    # New messages, which may be given the ids of those gone, are counted afresh.
    for words in range(1, 30):
        messages = [ask("q1"), reply("word " * words), ask("q2")]
        assert counted(messages) == fresh(messages)


def test_a_history_sent_again_is_counted_only_where_it_is_new(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []
    counts = Packing.token_counts

    def spy(self: Packing, texts: Sequence[str], container: str) -> list[int]:
        seen.append(list(texts))
        return counts(self, texts, container)

    monkeypatch.setattr(Packing, "token_counts", spy)
    processor = SkeletonHistoryProcessor(10**6, TokenCounter("o200k_base"), backend=backend)
    messages = [ask("q1"), reply("a1")]
    processor(messages)
    messages += [ask("q2")]
    first = processor.pack(messages).metadata
    assert seen == [["q1", "a1"], ["q2"]]
    again = processor.pack(messages).metadata
    assert seen[2:] == [] and again == first
    # The same message objects in another order still count as counted.
    processor(messages[::-1])
    assert seen[2:] == []


def test_an_encoding_name_counts_message_text_on_the_rust_backend() -> None:
    messages, _ = tool_turns()
    counter = TokenCounter("o200k_base")
    needed = [counter.count(message_text(message)) for message in messages]
    budget = needed[0] + needed[3] + needed[4]
    for token_counter in (None, "o200k_base"):
        processor = SkeletonHistoryProcessor(budget, token_counter, backend="rust")
        packed = processor.pack(messages)
        assert positions(messages, packed.messages) == [0, 3, 4]
        assert packed.metadata.compressed_tokens == budget


def test_an_encoding_name_needs_tiktoken_on_the_python_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    SkeletonHistoryProcessor(10, backend="python")
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    with pytest.raises(ImportError, match="pip install tiktoken"):
        SkeletonHistoryProcessor(10, backend="python")


# --- a real Agent, offline ----------------------------------------------------------------


def test_a_function_model_is_sent_the_packed_history(backend: str) -> None:
    views: list[list[str]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        views.append([signature(message) for message in messages])
        step = len(views)
        if has_user_prompt(messages[-1]):
            return call(f"a{step}", f"b{step}")
        return reply(f"done {step}")

    # One token a message, five in all.
    processor = SkeletonHistoryProcessor(5, lambda message: 1, backend=backend)
    agent = Agent(
        FunctionModel(respond), system_prompt="be brief", capabilities=[ProcessHistory(processor)]
    )

    @agent.tool_plain
    def lookup(id: str) -> str:
        return f"result {id}"

    history: list[ModelMessage] = []
    for question in ("q0", "q1", "q2"):
        history = agent.run_sync(question, message_history=history).all_messages()

    system, done2, done4 = "Q system:be brief user:q0", "A text:done 2", "A text:done 4"
    assert views == [
        [system],
        [system, "A call:a1 call:b1", "Q return:a1 return:b1"],
        [system, "A call:a1 call:b1", "Q return:a1 return:b1", done2, "Q user:q1"],
        # Seven messages: the system prompt's, the latest user prompt's, the call being
        # answered and its returns are pinned; the most recent of the rest fills the budget.
        [system, done2, "Q user:q1", "A call:a3 call:b3", "Q return:a3 return:b3"],
        [system, "A call:a3 call:b3", "Q return:a3 return:b3", done4, "Q user:q2"],
        [system, done4, "Q user:q2", "A call:a5 call:b5", "Q return:a5 return:b5"],
    ]
    # ProcessHistory keeps what the processor returns as the run's history.
    assert [signature(message) for message in history] == [*views[-1], "A text:done 6"]
    assert processor.last_metadata is not None
    assert (processor.last_metadata.fragments_total, processor.last_metadata.fragments_kept) == (
        7,
        5,
    )


def agent_on_test_model(
    processor: Callable[[list[ModelMessage]], list[ModelMessage]] | None,
) -> Agent:
    capabilities = [ProcessHistory(processor)] if processor is not None else []
    agent = Agent(TestModel(), system_prompt="be brief", capabilities=capabilities)

    @agent.tool_plain
    def lookup(id: str) -> str:
        return f"result {id}"

    @agent.tool_plain
    def weather(city: str) -> str:
        return "sunny"

    return agent


CALLS = "A call:pyd_ai_tool_call_id__lookup call:pyd_ai_tool_call_id__weather"
RETURNS = "Q return:pyd_ai_tool_call_id__lookup return:pyd_ai_tool_call_id__weather"
RESULT = 'A text:{"lookup":"result a","weather":"sunny"}'


def test_test_model_histories_reuse_call_ids_and_pair_by_position(backend: str) -> None:
    # TestModel names each call after its tool, so two runs' histories share the ids.
    plain = agent_on_test_model(None)
    history = plain.run_sync("q0").all_messages() + plain.run_sync("q1").all_messages()
    assert [signature(message) for message in history] == [
        "Q system:be brief user:q0", CALLS, RETURNS, RESULT,
        "Q system:be brief user:q1", CALLS, RETURNS, RESULT,
    ]  # fmt: skip
    packed: list[list[ModelMessage]] = []
    processor = SkeletonHistoryProcessor(6, lambda message: 1, backend=backend)

    def recorded(messages: list[ModelMessage]) -> list[ModelMessage]:
        packed.append(processor(messages))
        return packed[-1]

    agent_on_test_model(recorded).run_sync("q2", message_history=history)
    # Nine messages: the two with the system prompt and the latest are pinned; by recency the
    # last reply, then the second call with its returns fill the budget.
    assert [positions([*history, packed[0][-1]], packed[0])] == [[0, 4, 5, 6, 7, 8]]
    assert len(packed) == 1


def test_test_model_calls_its_tools_again_once_the_history_has_dropped_them(
    backend: str,
) -> None:
    packed: list[list[ModelMessage]] = []
    processor = SkeletonHistoryProcessor(2, lambda message: 1, backend=backend)

    def recorded(messages: list[ModelMessage]) -> list[ModelMessage]:
        kept = processor(messages)
        assert set(map(id, kept)) == {id(messages[index]) for index in must_keep(messages)}
        assert_valid(kept)
        packed.append(kept)
        return kept

    agent = agent_on_test_model(recorded)
    history: list[ModelMessage] = []
    for question in ("q0", "q1", "q2"):
        history = agent.run_sync(question, message_history=history).all_messages()
    system = "Q system:be brief user:q0"
    # A run merges the consecutive requests of the history it is given: q0's and q1's here.
    merged = "Q system:be brief user:q0 user:q1"
    assert [[signature(message) for message in kept] for kept in packed] == [
        [system],
        [system, CALLS, RETURNS],
        [system, "Q user:q1"],
        [system, "Q user:q1", CALLS, RETURNS],
        [merged, "Q user:q2"],
        [merged, "Q user:q2", CALLS, RETURNS],
    ]
    assert [signature(message) for message in history] == [*map(signature, packed[-1]), RESULT]


# --- fuzzed histories ---------------------------------------------------------------------


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[ModelMessage], list[int]]:
    """A history as an agent builds it, each with its token count: user turns, rounds of
    parallel tool calls answered (in any order, some as retries) by the next request, a user
    prompt now and then beside returns, output retries, long tool returns; it ends with a
    request."""
    messages: list[ModelMessage] = []
    tokens: list[int] = []
    reuse_ids = draw(st.booleans())

    def add(message: ModelMessage, long: bool = False) -> None:
        messages.append(message)
        tokens.append(draw(st.integers(200, 2000)) if long else draw(st.integers(0, 30)))

    turns = draw(st.integers(1, 5))
    for turn in range(turns):
        system = "be brief" if turn == 0 and draw(st.booleans()) else None
        add(ask(f"q{turn}", system=system))
        for round_ in range(draw(st.integers(0, 3))):
            count = draw(st.integers(1, 3))
            ids = [f"call_{j}" if reuse_ids else f"c{len(messages)}_{j}" for j in range(count)]
            add(call(*ids))
            parts: list[object] = []
            for call_id in draw(st.permutations(ids)):
                how = draw(st.sampled_from(["return", "retried", "retry prompt"]))
                if how == "retry prompt":
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        part: object = RetryPromptPart(
                            "bad", tool_name="lookup", tool_call_id=call_id
                        )
                else:
                    outcome = "success" if how == "return" else "retried"
                    part = ToolReturnPart("lookup", "r", tool_call_id=call_id, outcome=outcome)
                parts.append(part)
            if draw(st.integers(0, 4)) == 0:
                parts.append(UserPromptPart(f"and also {round_}"))
            add(ModelRequest(parts=parts), long=draw(st.integers(0, 5)) == 0)  # type: ignore[arg-type]
        last = turn == turns - 1
        if draw(st.integers(0, 3)) == 0:
            add(reply("unusable"))
            add(ModelRequest(parts=[RetryFeedbackPart("again", retry=RetryInfo("no_output"))]))
            if last:
                break
        if not last:
            add(reply(f"a{turn}"))
    return messages, tokens


def _pack(
    messages: list[ModelMessage], tokens: list[int], budget: int, backend: str, **options: object
) -> list[int]:
    table = {id(message): count for message, count in zip(messages, tokens)}
    processor = SkeletonHistoryProcessor(
        budget,
        lambda message: table[id(message)],
        backend=backend,
        **options,  # type: ignore[arg-type]
    )
    kept = processor(messages)
    assert_valid(kept)
    found = positions(messages, kept)
    assert found == sorted(set(found))
    return found


@given(
    history=histories(),
    budget_share=st.floats(0, 1.1),
    strategy=st.sampled_from(["greedy", "prefix", "density", "optimal"]),
    min_relevance=st.sampled_from([0.0, 0.3, 0.8]),
    scored=st.booleans(),
    data=st.data(),
)
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
def test_fuzzed_histories_stay_valid(
    backend: str,
    history: tuple[list[ModelMessage], list[int]],
    budget_share: float,
    strategy: str,
    min_relevance: float,
    scored: bool,
    data: st.DataObject,
) -> None:
    messages, tokens = history
    total = sum(tokens)
    budget = int(total * budget_share)
    options: dict[str, object] = {"strategy": strategy, "min_relevance": min_relevance}
    if scored:
        scores = data.draw(
            st.lists(st.floats(0, 1), min_size=len(messages), max_size=len(messages))
        )
        table = {id(message): score for message, score in zip(messages, scores)}
        options["relevance"] = lambda message: table[id(message)]
    found = _pack(messages, tokens, budget, backend, **options)
    pinned = must_keep(messages)
    assert pinned <= set(found)
    pinned_tokens = sum(tokens[index] for index in pinned)
    if pinned_tokens <= budget:
        assert sum(tokens[index] for index in found) <= budget
    if budget == 0:
        assert set(found) == pinned
    # optimal keeps, of the sets of most value, one of fewest tokens: not all when some score 0.
    if budget >= total and budget > 0 and min_relevance == 0.0 and strategy != "optimal":
        assert found == list(range(len(messages)))


@given(history=histories(), budget=st.integers(0, 60))
@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_fuzzed_histories_at_small_budgets_keep_the_pinned_alone_when_they_overflow(
    backend: str, history: tuple[list[ModelMessage], list[int]], budget: int
) -> None:
    messages, tokens = history
    found = _pack(messages, tokens, budget, backend)
    pinned = must_keep(messages)
    if sum(tokens[index] for index in pinned) > budget:
        assert set(found) == pinned
    else:
        assert sum(tokens[index] for index in found) <= budget


# --- bad input ----------------------------------------------------------------------------


def test_a_return_answering_an_unknown_call_is_named(backend: str) -> None:
    messages = [ask("q"), call("c1"), answer("c2"), ask("q2")]
    processor = SkeletonHistoryProcessor(10, lambda message: 1, backend=backend)
    with pytest.raises(ValueError) as raised:
        processor(messages)
    assert str(raised.value) == "messages[2] answers tool call 'c2', which no earlier message makes"


def test_an_item_that_is_not_a_message_is_named(backend: str) -> None:
    processor = SkeletonHistoryProcessor(10, lambda message: 1, backend=backend)
    with pytest.raises(FragmentTypeError) as raised:
        processor([ask("q"), "hello"])  # type: ignore[list-item]
    assert (raised.value.kind, raised.value.index) == ("not_fragment", 1)
    assert str(raised.value) == (
        "messages[1] must be a ModelRequest or a ModelResponse, got 'hello' (str)"
    )
    with pytest.raises(TypeError) as raised:
        processor({"messages": []})  # type: ignore[arg-type]
    assert str(raised.value) == (
        "messages must be a list of ModelRequest and ModelResponse objects, got dict"
    )


@pytest.mark.parametrize(
    ("counter", "relevance", "error", "message"),
    [
        (lambda m: -1, None, FragmentValueError, "messages[0]: token_count must be >= 0, got -1"),
        (
            lambda m: "x",
            None,
            FragmentTypeError,
            "messages[0]: token_count must be an int, got 'x' (str)",
        ),
        (
            lambda m: 1,
            lambda m: 1.5 if has_user_prompt(m) and m.parts[-1].content == "q2" else 0.5,
            FragmentValueError,
            "messages[2]: relevance_score must be in [0, 1], got 1.5",
        ),
        (
            lambda m: 1,
            lambda m: "high",
            FragmentTypeError,
            "messages[0]: relevance_score must be a real number, got 'high' (str)",
        ),
    ],
)
def test_bad_counts_and_scores_are_named(
    backend: str,
    counter: Callable[..., object],
    relevance: Callable[..., object] | None,
    error: type[Exception],
    message: str,
) -> None:
    messages = [ask("q1"), reply("a1"), ask("q2")]
    processor = SkeletonHistoryProcessor(
        3,
        counter,  # type: ignore[arg-type]
        relevance=relevance,  # type: ignore[arg-type]
        backend=backend,
    )
    with pytest.raises(error) as raised:
        processor(messages)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"skeleton_budget": -1}, ValueError, "skeleton_budget must be >= 0, got -1"),
        ({"skeleton_budget": 1.5}, TypeError, "skeleton_budget must be an int, got 1.5 (float)"),
        (
            {"skeleton_budget": 3, "token_counter": 5},
            TypeError,
            "token_counter must be a TokenCounter, an encoding name or a callable "
            "ModelMessage -> int, got 5 (int)",
        ),
        (
            {"skeleton_budget": 3, "relevance": 0.5},
            TypeError,
            "relevance must be None or a callable ModelMessage -> float, got float",
        ),
        (
            {"skeleton_budget": 3, "strategy": "newest"},
            ValueError,
            "strategy must be one of greedy, prefix, density, optimal, got 'newest'",
        ),
        (
            {"skeleton_budget": 3, "on_overflow": "drop"},
            ValueError,
            "on_overflow must be one of keep_top, strict, raise, got 'drop'",
        ),
        (
            {"skeleton_budget": 3, "min_relevance": 2},
            ValueError,
            "min_relevance must be in [0, 1], got 2",
        ),
        (
            {"skeleton_budget": 3, "media_tokens": -5},
            ValueError,
            "media_tokens must be >= 0, got -5",
        ),
        (
            {"skeleton_budget": 3, "media_tokens": "1600"},
            TypeError,
            "media_tokens must be an int, got '1600' (str)",
        ),
        (
            {"skeleton_budget": 3, "media_tokens": 2.0},
            TypeError,
            "media_tokens must be an int, got 2.0 (float)",
        ),
    ],
)
def test_bad_options(
    backend: str, options: dict[str, object], error: type[Exception], message: str
) -> None:
    options.setdefault("token_counter", lambda m: 1)
    with pytest.raises(error) as raised:
        SkeletonHistoryProcessor(**options, backend=backend)  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_an_unknown_encoding_is_named(backend: str) -> None:
    with pytest.raises(ValueError) as raised:
        SkeletonHistoryProcessor(3, "p50k", backend=backend)
    assert str(raised.value) == "unknown encoding 'p50k'; known encodings: o200k_base, cl100k_base"


# --- the stable rule (stable=True): a conversation packed request after request ------------


def stable_turns() -> tuple[list[ModelMessage], Callable[..., int]]:
    """A system prompt's request (6 tokens with its question) and three turns of a call (2),
    its return (12), an answer (5) and the next question (3): 22 tokens a turn."""
    pairs: list[tuple[ModelMessage, int]] = [(ask("q0", system="be brief"), 6)]
    for turn in range(3):
        pairs += [
            (call(f"c{turn}"), 2),
            (answer(f"c{turn}"), 12),
            (reply(f"a{turn}"), 5),
            (ask(f"q{turn + 1}"), 3),
        ]
    return costing(*pairs)


def test_stable_packing_appends_until_the_cut_moves_a_step(backend: str) -> None:
    messages, tokens = stable_turns()
    processor = SkeletonHistoryProcessor(40, tokens, stable=True, stable_step=0.25, backend=backend)
    # Budget 40, step 10. A request is sent after each question and after each return.
    packed = [processor.pack(messages[:size]) for size in (3, 5, 7, 9, 11, 13)]
    assert [positions(messages, p.messages) for p in packed] == [
        [0, 1, 2],
        [0, 1, 2, 3, 4],
        # 42 tokens. The marks: the first request (0 left out), then the first cut leaving
        # out 10 tokens more, the first answer (the call and its return, 14, left out; the
        # system prompt's request is pinned and stays); 28 tokens kept from there.
        [0, 3, 4, 5, 6],
        [0, 3, 4, 5, 6, 7, 8],  # appended: 36 tokens
        # 64 tokens, 50 from the first answer. The next mark leaves out 24 or more: the
        # second answer (33 left out, besides the second question, which opens its turn).
        [0, 4, 7, 8, 9, 10],
        [0, 4, 7, 8, 9, 10, 11, 12],  # appended: 39 tokens
    ]
    assert [p.stable_prefix for p in packed] == [len(p.messages) for p in packed]
    assert [p.metadata.compressed_tokens for p in packed] == [20, 28, 28, 36, 31, 39]
    assert processor.last_stable_prefix == 8


def test_without_stable_the_leading_system_requests_are_what_stays(backend: str) -> None:
    messages, tokens = stable_turns()
    packed = SkeletonHistoryProcessor(40, tokens, backend=backend).pack(messages[:11])
    # The system prompt shares its request with the first question: no request holds it
    # alone, so nothing is promised.
    assert packed.stable_prefix == 0


def test_a_response_pinned_as_the_last_message_is_not_promised(backend: str) -> None:
    greeting = [
        ModelRequest(parts=[SystemPromptPart("You are helpful.")]),
        ModelResponse(parts=[TextPart("Hello! How can I help?")]),
    ]
    asked = [*greeting, ModelRequest.user_text_prompt("What's 2+2?")]
    for stable in (False, True):
        processor = SkeletonHistoryProcessor(1000, lambda m: 10, stable=stable, backend=backend)
        packed = processor.pack(greeting)
        # Kept while it is the last message; a history starts on a user prompt after.
        assert (len(packed.messages), packed.stable_prefix) == (2, 1)
        assert processor.pack(asked).messages == [asked[0], asked[2]]


def test_a_budget_past_what_a_float_holds_packs_stably(backend: str) -> None:
    history = [
        ModelRequest(parts=[SystemPromptPart("s"), UserPromptPart("hi")]),
        ModelResponse(parts=[TextPart("yo")]),
        ModelRequest.user_text_prompt("q"),
    ]
    processor = SkeletonHistoryProcessor(10**400, lambda m: 10, stable=True, backend=backend)
    packed = processor.pack(history)
    assert (packed.messages, packed.stable_prefix) == (history, 3)


def request_sizes(messages: Sequence[ModelMessage]) -> list[int]:
    """The history's length at each model request: after each request."""
    return [
        index + 1 for index, message in enumerate(messages) if isinstance(message, ModelRequest)
    ]


def starts_with(longer: Sequence[ModelMessage], prefix: Sequence[ModelMessage]) -> bool:
    return len(longer) >= len(prefix) and all(a is b for a, b in zip(longer, prefix))


def assert_stable_run(
    packed: Sequence[PackedHistory], totals: Sequence[int], budget: int, step: float
) -> None:
    """Each packing keeps its promise to the next (its `stable_prefix` comes first when the
    history grew by no more than the room it left); over each run of packings made by the
    rule, at most one break per step of new conversation."""
    for index in range(1, len(packed)):
        before, now = packed[index - 1], packed[index]
        room = budget - before.metadata.compressed_tokens
        if totals[index] - totals[index - 1] <= room:
            assert starts_with(now.messages, before.messages[: before.stable_prefix])
    quantum = max(1, int(step * budget))
    run: list[int] = []
    by_rule = [p.stable_prefix == len(p.messages) for p in packed]
    for index, made_by_rule in enumerate([*by_rule, False]):
        if made_by_rule:
            run.append(index)
            continue
        if len(run) > 1:
            breaks = sum(
                not starts_with(packed[i].messages, packed[i - 1].messages) for i in run[1:]
            )
            assert breaks <= -(-(totals[run[-1]] - totals[run[0]]) // quantum)
        run = []


STABLE_FUZZ = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@given(
    history=histories(),
    budget_share=st.floats(0, 1.1),
    step=st.sampled_from([0.05, 0.25, 0.5, 1.0]),
)
@STABLE_FUZZ
def test_stable_histories_of_a_growing_conversation(
    backend: str,
    history: tuple[list[ModelMessage], list[int]],
    budget_share: float,
    step: float,
) -> None:
    messages, tokens = history
    table = {id(message): count for message, count in zip(messages, tokens)}
    budget = int(sum(tokens) * budget_share)
    processor = SkeletonHistoryProcessor(
        budget, lambda m: table[id(m)], stable=True, stable_step=step, backend=backend
    )
    sizes = request_sizes(messages)
    packed = [processor.pack(messages[:size]) for size in sizes]
    for size, result in zip(sizes, packed):
        assert_valid(result.messages)
        found = positions(messages, result.messages)
        assert found == sorted(set(found))
        pinned = must_keep(messages[:size])
        assert pinned <= set(found)
        if sum(tokens[index] for index in pinned) <= budget:
            assert result.metadata.compressed_tokens <= budget
    assert_stable_run(packed, [sum(tokens[:size]) for size in sizes], budget, step)


@given(
    history=histories(),
    budget_share=st.floats(0, 1.1),
    step=st.sampled_from([0.05, 0.25, 1.0]),
)
@STABLE_FUZZ
def test_stable_histories_fed_back_as_an_agent_keeps_them(
    backend: str,
    history: tuple[list[ModelMessage], list[int]],
    budget_share: float,
    step: float,
) -> None:
    # ProcessHistory keeps the processor's output as the run's history: each request's
    # history is the last packing with the new messages after it.
    messages, tokens = history
    table = {id(message): count for message, count in zip(messages, tokens)}
    budget = int(sum(tokens) * budget_share)
    processor = SkeletonHistoryProcessor(
        budget, lambda m: table[id(m)], stable=True, stable_step=step, backend=backend
    )
    packed: list[PackedHistory] = []
    totals: list[int] = []
    done = 0
    kept: list[ModelMessage] = []
    for size in request_sizes(messages):
        given_history = [*kept, *messages[done:size]]
        result = processor.pack(given_history)
        assert_valid(result.messages)
        assert positions(given_history, result.messages) == sorted(
            set(positions(given_history, result.messages))
        )
        # What the history grew by since the last packing is what the agent added.
        totals.append(sum(tokens[:size]))
        packed.append(result)
        kept, done = result.messages, size
    assert_stable_run(packed, totals, budget, step)


@given(
    history=histories(),
    budget_share=st.floats(0, 1.1),
    step=st.sampled_from([0.05, 0.25, 1.0]),
    strategy=st.sampled_from(["greedy", "prefix", "optimal"]),
)
@settings(max_examples=100, deadline=None)
def test_stable_packings_are_the_same_on_both_backends(
    history: tuple[list[ModelMessage], list[int]],
    budget_share: float,
    step: float,
    strategy: str,
) -> None:
    messages, tokens = history
    table = {id(message): count for message, count in zip(messages, tokens)}
    budget = int(sum(tokens) * budget_share)
    rust, python = (
        SkeletonHistoryProcessor(
            budget,
            lambda m: table[id(m)],
            stable=True,
            stable_step=step,
            strategy=strategy,
            backend=backend,
        )
        for backend in ("rust", "python")
    )
    for size in request_sizes(messages):
        ours, theirs = rust.pack(messages[:size]), python.pack(messages[:size])
        assert positions(messages, ours.messages) == positions(messages, theirs.messages)
        assert (ours.metadata, ours.stable_prefix) == (theirs.metadata, theirs.stable_prefix)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"stable": 1}, TypeError, "stable must be a bool, got int"),
        (
            {"stable_step": None},
            TypeError,
            "stable_step must be a real number, got None (NoneType)",
        ),
        ({"stable_step": 0}, ValueError, "stable_step must be in (0, 1], got 0"),
        ({"stable_step": 1.01}, ValueError, "stable_step must be in (0, 1], got 1.01"),
        ({"stable_step": float("inf")}, ValueError, "stable_step must be in (0, 1], got inf"),
    ],
)
def test_bad_stable_options(
    backend: str, options: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as raised:
        SkeletonHistoryProcessor(10, lambda m: 1, backend=backend, **options)  # type: ignore[arg-type]
    assert str(raised.value) == message


# --- images and other files -----------------------------------------------------------------

O200K = TokenCounter("o200k_base")


def tokens_of(messages: list[ModelMessage], backend: str, **options: object) -> int:
    processor = SkeletonHistoryProcessor(10**6, O200K, backend=backend, **options)  # type: ignore[arg-type]
    return processor.pack(messages).metadata.original_tokens


def test_the_issue_an_image_counts_by_its_size(backend: str) -> None:
    # Issue 41: a message holding a 5,000-character base64 image counted as its text alone.
    png = images.png(800, 600, note=3_600)
    assert 4_900 < len(images.b64(png)) < 5_100
    text = "What is in this picture?"
    for image in (
        BinaryContent(png, media_type="image/png"),
        BinaryImage(png, media_type="image/png"),
        ImageUrl(images.data_url(png)),
    ):
        request = ModelRequest(parts=[UserPromptPart([text, image])])
        assert (
            tokens_of([request], backend)
            == O200K.count(text) + image_tokens(800, 600)
            == (O200K.count(text) + 765)
        )


PNG = images.png(1280, 720)
JPEG = images.jpeg(1000, 1000)
GIF = images.gif(320, 200)
WEBP = images.webp_extended(3000, 2000)
ITEMS: list[tuple[str, object, int | None]] = [
    # (name, user prompt item, tokens; None for the default)
    ("png bytes", BinaryContent(PNG, media_type="image/png"), image_tokens(1280, 720)),
    ("jpeg bytes", BinaryContent(JPEG, media_type="image/jpeg"), 1334),
    ("gif bytes", BinaryImage(GIF, media_type="image/gif"), 255),
    ("webp bytes", BinaryContent(WEBP, media_type="image/webp"), image_tokens(3000, 2000)),
    ("data url", ImageUrl(images.data_url(JPEG, "image/jpeg")), 1334),
    ("image url", ImageUrl("https://example.com/cat.png"), None),
    ("image bytes of no known format", BinaryContent(b"BM00", media_type="image/bmp"), None),
    ("audio bytes", BinaryContent(b"RIFF0000WAVE", media_type="audio/wav"), None),
    ("pdf bytes", BinaryContent(b"%PDF-1.7", media_type="application/pdf"), None),
    ("audio url", AudioUrl("https://example.com/a.mp3"), None),
    ("video url", VideoUrl("https://example.com/a.mp4"), None),
    ("document url", DocumentUrl("https://example.com/a.pdf"), None),
    ("uploaded file", UploadedFile("file-abc123", provider_name="openai"), None),
    ("cache point", CachePoint(), 0),
]


@pytest.mark.parametrize(
    ("item", "tokens"), [(item, tokens) for _, item, tokens in ITEMS], ids=[i[0] for i in ITEMS]
)
def test_each_file_counts(backend: str, item: object, tokens: int | None) -> None:
    request = ModelRequest(parts=[UserPromptPart(["Look.", item])])  # type: ignore[list-item]
    expected = DEFAULT_MEDIA_TOKENS if tokens is None else tokens
    assert tokens_of([request], backend) == O200K.count("Look.") + expected
    assert message_media_tokens(request) == expected
    # The option sets what a file of unknown size counts; a known size keeps its figure.
    set_to = 40 if tokens is None else tokens
    assert tokens_of([request], backend, media_tokens=40) == O200K.count("Look.") + set_to
    assert message_media_tokens(request, 40) == set_to
    assert message_media_tokens(request, media_tokens=40) == set_to


@pytest.mark.parametrize(
    ("media_tokens", "error", "message"),
    [
        (-5, ValueError, "media_tokens must be >= 0, got -5"),
        (True, TypeError, "media_tokens must be an int, got True (bool)"),
        (2.5, TypeError, "media_tokens must be an int, got 2.5 (float)"),
    ],
)
def test_message_media_tokens_checks_its_option(
    media_tokens: object, error: type[Exception], message: str
) -> None:
    request = ModelRequest(parts=[UserPromptPart(["Look.", ImageUrl("https://example.com/a")])])
    with pytest.raises(error) as raised:
        message_media_tokens(request, media_tokens)  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_files_in_tool_returns_and_responses_count(backend: str) -> None:
    image = BinaryContent(PNG, media_type="image/png")
    call_part = ToolCallPart("screenshot", {}, tool_call_id="c1")
    returns = [
        ToolReturnPart("screenshot", image, tool_call_id="c1"),
        ToolReturnPart("screenshot", ["taken", image, {"at": 3}], tool_call_id="c1"),
        ToolReturnPart("screenshot", "taken", tool_call_id="c1"),
        ToolReturnPart("screenshot", ["taken", {"at": 3}], tool_call_id="c1"),
    ]
    for part, files in zip(returns, (1, 1, 0, 0)):
        history = [ask("Take one."), ModelResponse(parts=[call_part]), ModelRequest(parts=[part])]
        text_only = sum(O200K.count(message_text(message)) for message in history)
        assert tokens_of(history, backend) == text_only + files * image_tokens(1280, 720)
    drawn = ModelResponse(parts=[TextPart("Here it is."), FilePart(image)])
    assert tokens_of([drawn], backend) == O200K.count("Here it is.") + image_tokens(1280, 720)


def test_a_callable_counter_counts_the_whole_message_itself(backend: str) -> None:
    request = ModelRequest(parts=[UserPromptPart([BinaryContent(PNG, media_type="image/png")])])
    processor = SkeletonHistoryProcessor(100, lambda message: 7, media_tokens=3, backend=backend)
    assert processor.pack([request]).metadata.original_tokens == 7


def test_a_history_of_images_packed_to_a_budget_fits_it(backend: str) -> None:
    # A turn a screenshot: counting only the text, the whole history fits a budget the
    # images alone overflow several times over.
    shots = [
        (BinaryContent(images.png(1280, 720), media_type="image/png"), (1280, 720)),
        (BinaryContent(images.jpeg(1920, 1080), media_type="image/jpeg"), (1920, 1080)),
        (ImageUrl("https://example.com/screen.webp"), None),
    ]
    history: list[ModelMessage] = []
    sent: list[int] = []
    for turn in range(9):
        shot, size = shots[turn % 3]
        question = f"What changed in screen {turn}?"
        history.append(ModelRequest(parts=[UserPromptPart([question, shot])]))  # type: ignore[list-item]
        media = DEFAULT_MEDIA_TOKENS if size is None else image_tokens(*size)
        sent.append(O200K.count(question) + media)
        history.append(reply(f"Screen {turn} moved the toolbar."))
        sent.append(O200K.count(f"Screen {turn} moved the toolbar."))
    budget = 4_000
    where = {id(message): index for index, message in enumerate(history)}

    def real_tokens(kept: Sequence[ModelMessage]) -> int:
        return sum(sent[where[id(message)]] for message in kept)

    packed = SkeletonHistoryProcessor(budget, O200K, backend=backend).pack(history)
    assert packed.metadata.original_tokens == sum(sent) > 3 * budget
    assert real_tokens(packed.messages) == packed.metadata.compressed_tokens <= budget
    assert_valid(packed.messages)
    text_only = SkeletonHistoryProcessor(
        budget, lambda message: O200K.count(message_text(message)), backend=backend
    )(history)
    assert text_only == history
    assert real_tokens(text_only) > 3 * budget


def test_an_agent_is_sent_a_history_of_images_within_the_budget(backend: str) -> None:
    # Through pydantic-ai itself: each run adds a screenshot (1,229 tokens); the model is
    # sent the two latest, which fit, where counting text alone would send them all.
    sent: list[tuple[int, int]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tokens = sum(O200K.count(message_text(m)) + message_media_tokens(m) for m in messages)
        shots = sum(message_media_tokens(m) // image_tokens(1280, 720) for m in messages)
        sent.append((tokens, shots))
        return ModelResponse(parts=[TextPart("Noted.")])

    budget = 3_000
    processor = SkeletonHistoryProcessor(budget, O200K, backend=backend)
    agent = Agent(FunctionModel(model), capabilities=[ProcessHistory(processor)])
    history: list[ModelMessage] = []
    for turn in range(6):
        shot = BinaryContent(images.png(1280, 720), media_type="image/png")
        history = agent.run_sync([f"Screen {turn}:", shot], message_history=history).all_messages()
    assert [shots for _, shots in sent] == [1, 2, 2, 2, 2, 2]
    assert all(tokens <= budget for tokens, _ in sent)
