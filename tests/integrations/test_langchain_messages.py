"""pack_messages against the real langchain-core: exact results on hand-checked histories,
langchain issue #33245, fuzzed histories checked for validity every time, and bad input."""

from __future__ import annotations

import datetime
import functools
import json
from collections.abc import Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import images
from support.frameworks import framework

lc = framework("langchain_core")

from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import trim_messages  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder  # noqa: E402
from langchain_core.runnables import Runnable, RunnableLambda  # noqa: E402
from skeleton_compressor import (  # noqa: E402
    BudgetExceededError,
    FragmentTypeError,
    FragmentValueError,
    TokenCounter,
)
from skeleton_compressor.integrations._media import image_tokens  # noqa: E402
from skeleton_compressor.integrations._packing import Packing  # noqa: E402
from skeleton_compressor.integrations.langchain import (  # noqa: E402
    DEFAULT_MEDIA_TOKENS,
    MESSAGE_OVERHEAD,
    PackedMessages,
    pack_messages,
)

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def tool_call(call_id: str, name: str = "search", **args: object) -> dict[str, object]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def calls(message_id: str | None, *call_ids: str, text: str = "") -> AIMessage:
    return AIMessage(text, id=message_id, tool_calls=[tool_call(c, q=c) for c in call_ids])


def ids(messages: Sequence[BaseMessage]) -> list[str | None]:
    return [message.id for message in messages]


# A history whose token counts are given by id: hand-checked results below.
TOKENS = {"s": 5, "h1": 10, "a1": 8, "t1": 30, "t2": 4, "a2": 6, "h2": 7, "a3": 12, "h3": 3}


def by_id(message: BaseMessage) -> int:
    return TOKENS[str(message.id)]


def history() -> list[BaseMessage]:
    return [
        SystemMessage("You are terse.", id="s"),
        HumanMessage("Find the failing tests.", id="h1"),
        calls("a1", "c1", "c2"),
        ToolMessage("30 lines of pytest output", tool_call_id="c1", id="t1"),
        ToolMessage("ok", tool_call_id="c2", id="t2"),
        AIMessage("Two tests fail in billing.", id="a2"),
        HumanMessage("Why?", id="h2"),
        AIMessage("A rounding change in invoice totals.", id="a3"),
        HumanMessage("Fix it.", id="h3"),
    ]


# The checker of a valid history, written apart from the packer.


def call_ids_of(message: BaseMessage) -> list[str]:
    if not isinstance(message, AIMessage):
        return []
    made = [*message.tool_calls, *message.invalid_tool_calls]
    return [str(call["id"]) for call in made if call["id"] is not None]


def assert_valid(
    kept: Sequence[BaseMessage],
    messages: Sequence[BaseMessage],
    counter: Callable[[BaseMessage], int],
    budget: int,
    *,
    start_on_human: bool = True,
) -> None:
    place = {id(message): index for index, message in enumerate(messages)}
    positions = [place[id(message)] for message in kept]  # the very objects
    assert positions == sorted(set(positions)), "not in the original order"
    # System messages lead, all of them; then a human message when asked.
    systems = [m for m in messages if isinstance(m, SystemMessage)]
    assert list(kept[: len(systems)]) == systems
    rest = kept[len(systems) :]
    if start_on_human and rest:
        assert isinstance(rest[0], HumanMessage), f"starts on {type(rest[0]).__name__}"
    humans = [m for m in messages if isinstance(m, HumanMessage)]
    if humans:
        assert any(m is humans[-1] for m in kept), "the latest human message is missing"
    # Every tool message in the block right after the AI message making its call; every
    # answer the input holds to a kept call kept in that block.
    caller: AIMessage | None = None
    block: list[ToolMessage] = []
    for message in kept:
        if isinstance(message, ToolMessage):
            assert caller is not None, f"tool message {message.id} follows no tool call"
            assert message.tool_call_id in call_ids_of(caller), f"{message.id} answers no call"
            block.append(message)
            continue
        if caller is not None:
            assert_answered(caller, block, messages)
        caller = message if isinstance(message, AIMessage) and call_ids_of(message) else None
        block = []
    if caller is not None:
        assert_answered(caller, block, messages)
    pinned = sum(counter(m) for m in [*systems, *humans[-1:]])
    if pinned <= budget:
        assert sum(counter(m) for m in kept) <= budget


def assert_answered(
    caller: AIMessage, block: list[ToolMessage], messages: Sequence[BaseMessage]
) -> None:
    made = set(call_ids_of(caller))
    answers = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id in made]
    assert {id(m) for m in block} == {id(m) for m in answers}, f"{caller.id}: calls unanswered"


# Hand-checked results.


def test_greedy_keeps_the_turn_it_starts_in_and_the_latest_messages(backend: str) -> None:
    messages = history()
    # Recency ranks a3, h2, a2 first; greedy keeps them, skips the 42-token tool call and
    # h1. That starts on a2, so the turn h1 opens is kept, and the rest chosen again: a3
    # and h2 fit beside s, h1 and h3 (18 tokens); a2 no longer does.
    packed = pack_messages(messages, skeleton_budget=40, token_counter=by_id, backend=backend)
    assert ids(packed) == ["s", "h1", "h2", "a3", "h3"]
    assert all(any(m is n for n in messages) for m in packed)


def test_greedy_without_start_on_human(backend: str) -> None:
    messages = history()
    packed = pack_messages(
        messages,
        skeleton_budget=40,
        token_counter=by_id,
        start_on_human=False,
        backend=backend,
    )
    assert ids(packed) == ["s", "a2", "h2", "a3", "h3"]


def test_the_tool_call_comes_whole_or_not_at_all(backend: str) -> None:
    messages = history()
    pack = lambda budget, **options: ids(  # noqa: E731
        pack_messages(
            messages, skeleton_budget=budget, token_counter=by_id, backend=backend, **options
        )
    )
    assert pack(85) == ids(messages)
    # 8 pinned, 76 left: a3, h2, a2 (25), the call a1 t1 t2 (42); h1 (10) no longer fits and
    # the history starts on a1. Again from h1 (18 pinned, 66 left): a3, h2, a2, and the
    # call does not fit in the 41 left.
    assert pack(84) == ["s", "h1", "a2", "h2", "a3", "h3"]
    # Optimal, again from h1: the call (value 12/9 in recency) with h2 and a3 (61 tokens,
    # 27/9) beats a2, h2 and a3 (21/9) and the call with a2 and a3 (26/9).
    assert pack(84, strategy="optimal") == ["s", "h1", "a1", "t1", "t2", "h2", "a3", "h3"]
    # 8 pinned, 54 left: a3, h2, a2 (25), the call skipped, h1 (10): starts on a turn.
    assert pack(62) == ["s", "h1", "a2", "h2", "a3", "h3"]


def test_prefix_stops_at_the_first_misfit(backend: str) -> None:
    messages = history()
    packed = pack_messages(
        messages,
        skeleton_budget=40,
        token_counter=by_id,
        strategy="prefix",
        start_on_human=False,
        backend=backend,
    )
    assert ids(packed) == ["s", "a2", "h2", "a3", "h3"]


def test_optimal_keeps_the_most_relevance_greedy_walks_past(backend: str) -> None:
    messages = history()
    scores = {"h1": 0.5, "a1": 0.0, "t1": 0.9, "t2": 0.0, "a2": 0.5, "h2": 0.5, "a3": 0.1}
    pack = lambda strategy: ids(  # noqa: E731
        pack_messages(
            messages,
            skeleton_budget=50,
            token_counter=by_id,
            relevance=lambda m: scores.get(str(m.id), 1.0),
            strategy=strategy,
            start_on_human=False,
            backend=backend,
        )
    )
    # 8 pinned, 42 left: greedy takes the tool call (0.9, 42 tokens) first, and then nothing
    # fits; optimal takes h1, a2, h2 and a3 (35 tokens, 1.6) instead.
    assert pack("greedy") == ["s", "a1", "t1", "t2", "h3"]
    assert pack("optimal") == ["s", "h1", "a2", "h2", "a3", "h3"]


def test_pinned_messages_over_the_budget_under_each_overflow_rule(backend: str) -> None:
    messages = history()
    packed = pack_messages(
        messages, skeleton_budget=6, token_counter=by_id, with_metadata=True, backend=backend
    )
    assert ids(packed.messages) == ["s", "h3"]
    assert packed.metadata.over_budget and packed.metadata.compressed_tokens == 8
    for rule in ("strict", "raise"):
        with pytest.raises(BudgetExceededError) as error:
            pack_messages(
                messages, skeleton_budget=6, token_counter=by_id, on_overflow=rule, backend=backend
            )
        assert str(error.value) == "required fragments need 8 tokens, skeleton_budget is 6"


def test_a_budget_of_zero_keeps_the_pinned_messages(backend: str) -> None:
    packed = pack_messages(history(), skeleton_budget=0, token_counter=by_id, backend=backend)
    assert ids(packed) == ["s", "h3"]


def test_min_relevance_leaves_out_old_messages_but_not_pinned_ones(backend: str) -> None:
    # Recency: of 9 messages, index i scores (i + 1) / 9; 0.7 keeps indices 6 and up.
    packed = pack_messages(
        history(), skeleton_budget=100, token_counter=by_id, min_relevance=0.7, backend=backend
    )
    assert ids(packed) == ["s", "h2", "a3", "h3"]


def test_the_metadata_reports_the_whole_history(backend: str) -> None:
    packed = pack_messages(
        history(), skeleton_budget=40, token_counter=by_id, with_metadata=True, backend=backend
    )
    assert isinstance(packed, PackedMessages)
    metadata = packed.metadata
    assert (metadata.original_tokens, metadata.compressed_tokens) == (85, 37)
    assert (metadata.fragments_total, metadata.fragments_kept) == (9, 5)
    assert metadata.skeleton_budget == 40 and not metadata.over_budget
    assert metadata.ratio == 37 / 85


# langchain issue #33245: trim_messages(strategy="last") returns a history that starts with a
# tool message whose call it dropped. The first three messages are the issue's own; the issue
# as stored here is cut after them, so the last four are of the types its reproduction
# lists (human, AI, human, AI) with text of ours.


def issue_33245() -> list[BaseMessage]:
    return [
        HumanMessage("What's the weather in Florida?"),
        AIMessage(
            [
                {"type": "text", "text": "Let's check the weather in Florida"},
                {
                    "type": "tool_use",
                    "id": "abc123",
                    "name": "get_weather",
                    "input": {"location": "Florida"},
                },
            ],
            tool_calls=[
                {
                    "name": "get_weather",
                    "args": {"location": "Florida"},
                    "id": "abc123",
                    "type": "tool_call",
                }
            ],
        ),
        ToolMessage("It's sunny.", name="get_weather", tool_call_id="abc123"),
        HumanMessage("And in New York?"),
        AIMessage("Rainy, most likely."),
        HumanMessage("Thanks!"),
        AIMessage("You're welcome."),
    ]


def one_each(message: BaseMessage) -> int:
    return 1


def test_issue_33245_trim_messages_returns_an_invalid_history() -> None:
    messages = issue_33245()
    trimmed = trim_messages(messages, strategy="last", token_counter=len, max_tokens=5)
    assert [type(m).__name__ for m in trimmed] == [
        "ToolMessage", "HumanMessage", "AIMessage", "HumanMessage", "AIMessage",
    ]  # fmt: skip
    with pytest.raises(AssertionError, match="follows no tool call"):
        assert_valid(trimmed, messages, one_each, 5, start_on_human=False)


@pytest.mark.parametrize(
    ("strategy", "kept"),
    [("greedy", [0, 3, 4, 5, 6]), ("prefix", [3, 4, 5, 6]), ("optimal", [0, 3, 4, 5, 6])],
)
def test_issue_33245_pack_messages_returns_a_valid_one(
    backend: str, strategy: str, kept: list[int]
) -> None:
    messages = issue_33245()
    for start_on_human in (True, False):
        packed = pack_messages(
            messages,
            skeleton_budget=5,
            token_counter=one_each,
            strategy=strategy,
            start_on_human=start_on_human,
            backend=backend,
        )
        assert [messages.index(m) for m in packed] == kept
        assert_valid(packed, messages, one_each, 5, start_on_human=start_on_human)


def test_issue_33245_a_budget_for_the_tool_call_keeps_it_with_its_answer(backend: str) -> None:
    messages = issue_33245()
    packed = pack_messages(
        messages, skeleton_budget=6, token_counter=one_each, start_on_human=False, backend=backend
    )
    assert [messages.index(m) for m in packed] == [1, 2, 3, 4, 5, 6]
    packed = pack_messages(messages, skeleton_budget=6, token_counter=one_each, backend=backend)
    # Starting on the AI message is not allowed: the turn opening at 0 is kept, the call
    # then no longer fits.
    assert [messages.index(m) for m in packed] == [0, 3, 4, 5, 6]


# Counting, relevance, the shapes of messages.


def test_a_token_counter_counts_text_tool_calls_and_the_overhead(backend: str) -> None:
    counter = TokenCounter("o200k_base")
    anthropic_style = AIMessage(
        [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Oslo"}},
        ],
        tool_calls=[tool_call("c1", "weather", city="Oslo")],
    )
    messages = [
        SystemMessage("Be brief."),
        HumanMessage("Weather in Oslo?"),
        anthropic_style,
        ToolMessage("Snow, -3 °C", tool_call_id="c1"),
    ]
    texts = ["Be brief.", "Weather in Oslo?", 'Checking.\nweather\n{"city": "Oslo"}', "Snow, -3 °C"]
    expected = sum(counter.count(text) + MESSAGE_OVERHEAD for text in texts)
    packed = pack_messages(
        messages, skeleton_budget=1000, token_counter=counter, with_metadata=True, backend=backend
    )
    assert packed.messages == messages
    assert packed.metadata.original_tokens == expected


def test_the_default_counter_is_o200k_base(backend: str) -> None:
    messages = [HumanMessage("Weather in Oslo?")]
    packed = pack_messages(messages, skeleton_budget=100, with_metadata=True, backend=backend)
    expected = TokenCounter("o200k_base").count("Weather in Oslo?") + MESSAGE_OVERHEAD
    assert packed.metadata.original_tokens == expected


def test_invalid_tool_calls_are_calls_kept_with_their_answers(backend: str) -> None:
    broken = AIMessage(
        "",
        id="a",
        invalid_tool_calls=[{"name": "search", "args": "{oops", "id": "bad1", "error": "bad JSON"}],
    )
    messages = [
        HumanMessage("Look it up.", id="h1"),
        broken,
        ToolMessage("Error: arguments are not JSON", tool_call_id="bad1", status="error", id="t"),
        AIMessage("Sorry, once more.", id="r"),
        HumanMessage("Go on.", id="h2"),
    ]
    sizes = {"h1": 1, "a": 3, "t": 3, "r": 1, "h2": 1}
    count = lambda m: sizes[str(m.id)]  # noqa: E731
    for budget, expected in [(9, ["h1", "a", "t", "r", "h2"]), (8, ["h1", "r", "h2"])]:
        packed = pack_messages(
            messages, skeleton_budget=budget, token_counter=count, backend=backend
        )
        assert ids(packed) == expected


def test_an_unanswered_call_at_the_end_is_kept_alone(backend: str) -> None:
    messages = [HumanMessage("Search.", id="h"), calls("a", "c1")]
    packed = pack_messages(messages, skeleton_budget=2, token_counter=one_each, backend=backend)
    assert packed == messages


def test_a_system_message_in_the_middle_is_pinned_in_its_place(backend: str) -> None:
    messages = [
        SystemMessage("Be brief.", id="s1"),
        HumanMessage("Hi.", id="h1"),
        AIMessage("Hello.", id="a1"),
        SystemMessage("The user is an admin.", id="s2"),
        HumanMessage("Reset the cache.", id="h2"),
        AIMessage("Done.", id="a2"),
        HumanMessage("Thanks.", id="h3"),
    ]
    # Pinned s1, s2, h3 (3); a2 fits in the 1 left but opens no turn, so h2's turn is
    # pinned, and then a2 no longer fits.
    packed = pack_messages(messages, skeleton_budget=4, token_counter=one_each, backend=backend)
    assert ids(packed) == ["s1", "s2", "h2", "h3"]
    packed = pack_messages(messages, skeleton_budget=5, token_counter=one_each, backend=backend)
    assert ids(packed) == ["s1", "s2", "h2", "a2", "h3"]


def test_chat_messages_of_the_user_and_system_roles_count_as_those(backend: str) -> None:
    messages = [
        ChatMessage("Be brief.", role="system", id="s"),
        ChatMessage("Hi.", role="user", id="u1"),
        ChatMessage("Hello.", role="assistant", id="a1"),
        ChatMessage("Bye.", role="user", id="u2"),
    ]
    # s and u2 pinned (2); a1 fits in the 1 left, opens no turn: u1's turn is pinned instead.
    packed = pack_messages(messages, skeleton_budget=3, token_counter=one_each, backend=backend)
    assert ids(packed) == ["s", "u1", "u2"]


def test_relevance_may_come_from_a_callable(backend: str) -> None:
    messages = history()
    favourite = {"h2": 1.0, "a3": 0.0}
    packed = pack_messages(
        messages,
        skeleton_budget=20,
        token_counter=by_id,
        relevance=lambda m: favourite.get(str(m.id), 0.5),
        start_on_human=False,
        backend=backend,
    )
    # 8 pinned; h2 (7) first, then by input order among the 0.5s: h1 does not fit in 5.
    assert ids(packed) == ["s", "h2", "h3"]


def test_a_prompt_value_is_read_for_its_messages(backend: str) -> None:
    chat = history()
    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("chat")])
    value = prompt.invoke({"chat": chat})
    packed = pack_messages(value, skeleton_budget=40, token_counter=by_id, backend=backend)
    assert ids(packed) == ["s", "h1", "h2", "a3", "h3"]


def test_without_messages_it_is_a_runnable_that_chains(backend: str) -> None:
    packer = pack_messages(skeleton_budget=40, token_counter=by_id, backend=backend)
    assert isinstance(packer, Runnable) and packer.get_name() == "pack_messages"
    chain = packer | RunnableLambda(ids)
    assert chain.invoke(history()) == ["s", "h1", "h2", "a3", "h3"]
    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("chat")])
    assert (prompt | packer | RunnableLambda(ids)).invoke({"chat": history()}) == [
        "s", "h1", "h2", "a3", "h3",
    ]  # fmt: skip
    with_metadata = pack_messages(
        skeleton_budget=40, token_counter=by_id, with_metadata=True, backend=backend
    )
    assert with_metadata.invoke(history()).metadata.compressed_tokens == 37


def test_a_runnables_schemas_are_made_from_its_types(backend: str) -> None:
    # As a server or a chain first in line asks for them (LangServe, `chain.input_schema`).
    packer = pack_messages(skeleton_budget=40, backend=backend)
    assert "anyOf" in packer.get_input_schema().model_json_schema()
    assert packer.get_output_schema().model_json_schema()["title"] == "pack_messages_output"
    chain = packer | RunnableLambda(ids)
    assert chain.input_schema.model_json_schema() == packer.input_schema.model_json_schema()


# A counter object counts on either backend; the encoding name only on the Rust one.
O200K = TokenCounter("o200k_base")


def counted_texts(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The texts each call counts with the built-in counter, call by call."""
    seen: list[list[str]] = []
    counts = Packing.token_counts

    def spy(self: Packing, texts: Sequence[str], container: str) -> list[int]:
        seen.append(list(texts))
        return counts(self, texts, container)

    monkeypatch.setattr(Packing, "token_counts", spy)
    return seen


def test_a_runnable_counts_only_what_it_has_not_counted(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = counted_texts(monkeypatch)
    packer = pack_messages(
        skeleton_budget=40, token_counter=O200K, with_metadata=True, backend=backend
    )
    chat = history()
    packer.invoke(chat[:7])
    assert [len(texts) for texts in seen] == [7]
    # The history grown by a turn: only the new messages are counted.
    grown = packer.invoke(chat)
    assert seen[1] == ["A rounding change in invoice totals.", "Fix it."]
    seen.clear()
    assert grown == pack_messages(
        chat, skeleton_budget=40, token_counter=O200K, with_metadata=True, backend=backend
    )
    assert len(seen[0]) == 9
    # A message changed since is counted again, and its new count is the one used.
    chat[5].content = "Two tests fail in billing: both round invoice totals half up, not even."
    seen.clear()
    changed = packer.invoke(chat)
    assert seen == [[chat[5].content]]
    assert changed.metadata.original_tokens > grown.metadata.original_tokens
    assert changed == pack_messages(
        chat, skeleton_budget=40, token_counter=O200K, with_metadata=True, backend=backend
    )


def test_a_direct_call_and_a_message_counter_remember_nothing(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = counted_texts(monkeypatch)
    for _ in range(2):
        pack_messages(history(), skeleton_budget=40, token_counter=O200K, backend=backend)
    assert [len(texts) for texts in seen] == [9, 9]
    calls_made = []

    def counting(message: BaseMessage) -> int:
        calls_made.append(message.id)
        return by_id(message)

    packer = pack_messages(skeleton_budget=40, token_counter=counting, backend=backend)
    chat = history()
    packer.invoke(chat)
    packer.invoke(chat)
    assert calls_made == ids(chat) * 2


def test_an_empty_history_is_empty(backend: str) -> None:
    packed = pack_messages(
        [], skeleton_budget=10, token_counter=one_each, with_metadata=True, backend=backend
    )
    assert packed.messages == []
    assert (packed.metadata.original_tokens, packed.metadata.ratio) == (0, 1.0)


# Bad input.


def test_a_tool_message_answering_an_unknown_call_is_named(backend: str) -> None:
    messages = [HumanMessage("hi"), calls("a", "c1"), ToolMessage("?", tool_call_id="zz")]
    with pytest.raises(ValueError) as error:
        pack_messages(messages, skeleton_budget=10, token_counter=one_each, backend=backend)
    assert str(error.value) == "messages[2] answers tool call 'zz', which no earlier message makes"


def test_a_reused_call_id_pairs_each_answer_with_the_latest_call(backend: str) -> None:
    # Some models number their calls afresh each turn; each turn's pair is kept or dropped whole.
    messages = [
        HumanMessage("first"),
        calls("a", "call_0"),
        ToolMessage("1", tool_call_id="call_0"),
        HumanMessage("second"),
        calls("b", "call_0"),
        ToolMessage("2", tool_call_id="call_0"),
    ]
    kept = pack_messages(messages, skeleton_budget=3, token_counter=one_each, backend=backend)
    assert kept == messages[3:]
    # With one token more, the first turn's call would fit only without its answer: the
    # first human message is kept instead.
    kept = pack_messages(messages, skeleton_budget=4, token_counter=one_each, backend=backend)
    assert kept == [messages[0], *messages[3:]]


def test_an_item_that_is_not_a_message_is_named(backend: str) -> None:
    with pytest.raises(TypeError) as error:
        pack_messages(
            [HumanMessage("hi"), {"role": "user", "content": "hi"}],  # type: ignore[list-item]
            skeleton_budget=10,
            backend=backend,
            token_counter=one_each,
        )
    assert str(error.value) == (
        "messages[1] must be a langchain_core BaseMessage (convert_to_messages makes them of "
        "dicts, tuples and strings), got {'role': 'user', 'content': 'hi'} (dict)"
    )


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("hi", "'hi' (str)"),
        (
            HumanMessage("hi"),
            "HumanMessage(content='hi', additional_kwargs={}, response_metadata={}) (HumanMessage)",
        ),
        (5, "5 (int)"),
        # A chain's input dict passed whole: its keys are not the messages.
        ({"history": []}, "{'history': []} (dict)"),
    ],
)
def test_messages_that_are_not_a_sequence_of_messages(
    backend: str, given: object, shown: str
) -> None:
    with pytest.raises(TypeError) as error:
        pack_messages(given, skeleton_budget=10, token_counter=one_each, backend=backend)  # type: ignore[call-overload]
    assert str(error.value) == (
        f"messages must be a sequence of langchain_core BaseMessage or a PromptValue, got {shown}"
    )


@pytest.mark.parametrize(
    ("options", "error_type", "message"),
    [
        ({"skeleton_budget": -1}, ValueError, "skeleton_budget must be >= 0, got -1"),
        ({"skeleton_budget": 1.5}, TypeError, "skeleton_budget must be an int, got 1.5 (float)"),
        (
            {"strategy": "best"},
            ValueError,
            "strategy must be one of greedy, prefix, density, optimal, got 'best'",
        ),
        (
            {"on_overflow": "drop"},
            ValueError,
            "on_overflow must be one of keep_top, strict, raise, got 'drop'",
        ),
        ({"min_relevance": 2}, ValueError, "min_relevance must be in [0, 1], got 2"),
        (
            {"token_counter": 5},
            TypeError,
            "token_counter must be a TokenCounter, an encoding name or a callable "
            "BaseMessage -> int, got 5 (int)",
        ),
        (
            {"token_counter": "gpt9"},
            ValueError,
            "unknown encoding 'gpt9'; known encodings: o200k_base, cl100k_base",
        ),
        (
            {"relevance": 0.5},
            TypeError,
            "relevance must be None or a callable BaseMessage -> float, got 0.5 (float)",
        ),
        ({"start_on_human": 1}, TypeError, "start_on_human must be a bool, got 1 (int)"),
        ({"with_metadata": None}, TypeError, "with_metadata must be a bool, got None (NoneType)"),
        ({"stable": "yes"}, TypeError, "stable must be a bool, got 'yes' (str)"),
        ({"stable_step": "1/4"}, TypeError, "stable_step must be a real number, got '1/4' (str)"),
        ({"stable_step": 0.0}, ValueError, "stable_step must be in (0, 1], got 0.0"),
        ({"media_tokens": -1}, ValueError, "media_tokens must be >= 0, got -1"),
        ({"media_tokens": 1.5}, TypeError, "media_tokens must be an int, got 1.5 (float)"),
        ({"media_tokens": None}, TypeError, "media_tokens must be an int, got None (NoneType)"),
        ({"media_tokens": True}, TypeError, "media_tokens must be an int, got True (bool)"),
    ],
)
def test_bad_options_are_refused_at_once(
    backend: str, options: dict[str, object], error_type: type[Exception], message: str
) -> None:
    arguments: dict[str, object] = {"skeleton_budget": 10, "token_counter": one_each, **options}
    for messages in (history(), None):  # the Runnable checks them when made, too
        with pytest.raises(error_type) as error:
            pack_messages(messages, backend=backend, **arguments)  # type: ignore[call-overload]
        assert str(error.value) == message


def test_bad_counts_and_scores_from_callables_name_the_message(backend: str) -> None:
    messages = history()
    with pytest.raises(FragmentValueError) as score:
        pack_messages(
            messages,
            skeleton_budget=10,
            token_counter=by_id,
            relevance=lambda m: 1.5 if m.id == "a2" else 0.5,
            backend=backend,
        )
    assert str(score.value) == "messages[5] (id 'a2'): relevance_score must be in [0, 1], got 1.5"
    with pytest.raises(FragmentTypeError) as count:
        pack_messages(
            messages,
            skeleton_budget=10,
            token_counter=lambda m: "many" if m.id == "t1" else 1,  # type: ignore[arg-type,return-value]
            backend=backend,
        )
    assert str(count.value) == "messages[3] (id 't1'): token_count must be an int, got 'many' (str)"


# Fuzzed histories: parallel calls, interleaved turns, long tool outputs, every budget.

WORDS = st.integers(0, 30).map(lambda n: " ".join(["word"] * n))
LONG_OUTPUT = st.integers(200, 3000).map(lambda n: "line of tool output\n" * (n // 4))


def fuzz_count(message: BaseMessage) -> int:
    calls_text = "".join(json.dumps(c["args"]) for c in getattr(message, "tool_calls", []))
    return (len(message.text) + len(calls_text)) // 4 + 1


@st.composite
def chats(draw: st.DrawFn) -> list[BaseMessage]:
    """Turns of a question and steps: replies, or parallel calls answered in any order (one
    of them now and then a call that failed to parse), outputs short or long; sometimes a
    first message off a turn, sometimes a last call still unanswered."""
    messages: list[BaseMessage] = [SystemMessage(draw(WORDS))] if draw(st.booleans()) else []
    if draw(st.integers(0, 9)) == 0:
        messages.append(AIMessage(draw(WORDS)))
    made = 0
    for _ in range(draw(st.integers(0, 6))):
        messages.append(HumanMessage(draw(WORDS)))
        for _ in range(draw(st.integers(0, 3))):
            width = draw(st.integers(0, 3))  # 0: a plain reply; more: parallel calls
            if width == 0:
                messages.append(AIMessage(draw(WORDS)))
                continue
            call_ids = [f"call_{made + k}" for k in range(width)]
            made += width
            broken = call_ids[:1] if draw(st.integers(0, 4)) == 0 else []
            messages.append(
                AIMessage(
                    draw(WORDS),
                    tool_calls=[tool_call(c, q=draw(WORDS)) for c in call_ids if c not in broken],
                    invalid_tool_calls=[
                        {"name": "search", "args": "{", "id": c, "error": "bad JSON"}
                        for c in broken
                    ],
                )
            )
            for call_id in draw(st.permutations(call_ids)):
                output = draw(st.one_of(WORDS, LONG_OUTPUT))
                messages.append(ToolMessage(output, tool_call_id=call_id))
    if draw(st.integers(0, 4)) == 0:
        messages.append(calls(None, f"call_{made}"))
    return messages


@FUZZ
@given(
    messages=chats(),
    share=st.one_of(st.just(0.0), st.floats(0, 1.1)),
    tiny=st.integers(0, 5),
    strategy=st.sampled_from(["greedy", "prefix", "density", "optimal"]),
    start_on_human=st.booleans(),
)
def test_every_packed_history_is_valid(
    backend: str,
    messages: list[BaseMessage],
    share: float,
    tiny: int,
    strategy: str,
    start_on_human: bool,
) -> None:
    total = sum(fuzz_count(m) for m in messages)
    for budget in (tiny, int(total * share)):
        packed = pack_messages(
            messages,
            skeleton_budget=budget,
            token_counter=fuzz_count,
            strategy=strategy,
            start_on_human=start_on_human,
            backend=backend,
        )
        assert_valid(packed, messages, fuzz_count, budget, start_on_human=start_on_human)


@FUZZ
@given(messages=chats(), share=st.floats(0, 1))
def test_strict_never_goes_over_the_budget(
    backend: str, messages: list[BaseMessage], share: float
) -> None:
    budget = int(sum(fuzz_count(m) for m in messages) * share)
    pinned = [m for m in messages if isinstance(m, SystemMessage)]
    pinned += [m for m in messages if isinstance(m, HumanMessage)][-1:]
    try:
        packed = pack_messages(
            messages,
            skeleton_budget=budget,
            token_counter=fuzz_count,
            on_overflow="strict",
            backend=backend,
        )
    except BudgetExceededError as error:
        assert error.needed_tokens == sum(fuzz_count(m) for m in pinned) > budget
        return
    assert sum(fuzz_count(m) for m in packed) <= budget
    assert_valid(packed, messages, fuzz_count, budget)


# The stable rule (stable=True): a conversation packed request after request.


def chat_of_turns() -> list[BaseMessage]:
    """A system prompt (4 tokens) and four turns of a question (3), a call (2) and its
    output (12), and an answer (5): 22 tokens a turn."""
    messages: list[BaseMessage] = [SystemMessage("s", id="s")]
    for turn in range(4):
        messages += [
            HumanMessage("q", id=f"q{turn}"),
            calls(f"c{turn}", f"call_{turn}"),
            ToolMessage("output", tool_call_id=f"call_{turn}", id=f"t{turn}"),
            AIMessage("a", id=f"a{turn}"),
        ]
    return messages


TURN_TOKENS = {"s": 4, "q": 3, "c": 2, "t": 12, "a": 5}


def turn_tokens(message: BaseMessage) -> int:
    return TURN_TOKENS[str(message.id)[0]]


def pack_turns(chat: list[BaseMessage], size: int, backend: str) -> PackedMessages:
    return pack_messages(
        chat[:size],
        skeleton_budget=60,
        token_counter=turn_tokens,
        stable=True,
        stable_step=0.25,
        with_metadata=True,
        backend=backend,
    )


def test_stable_packing_appends_until_the_cut_moves_a_step(backend: str) -> None:
    chat = chat_of_turns()
    # Budget 60, step 15. A cut inside a turn keeps the turn's question, so it leaves out
    # at most 14 tokens more than the question does; the marks are the questions, each 22
    # tokens of conversation after the one before.
    packed = [pack_turns(chat, size, backend) for size in (5, 9, 13, 17)]  # after answers
    assert [ids(p.messages) for p in packed] == [
        ["s", "q0", "c0", "t0", "a0"],
        ["s", "q0", "c0", "t0", "a0", "q1", "c1", "t1", "a1"],
        # 70 tokens: from the second question, 22 left out, 48 kept.
        ["s", "q1", "c1", "t1", "a1", "q2", "c2", "t2", "a2"],
        # 92 tokens, 70 from the second question: from the third, 48 kept.
        ["s", "q2", "c2", "t2", "a2", "q3", "c3", "t3", "a3"],
    ]
    assert [p.stable_prefix for p in packed] == [5, 9, 9, 9]
    assert [p.metadata.compressed_tokens for p in packed] == [26, 48, 48, 48]


def test_the_next_packing_keeps_the_history_while_the_new_messages_fit_its_room(
    backend: str,
) -> None:
    chat = chat_of_turns()
    before = pack_turns(chat, 13, backend)
    assert before.metadata.compressed_tokens == 48  # room for 12 tokens more
    asked = pack_turns(chat, 14, backend)  # the question (3 tokens) fits
    assert starts_with(asked.messages, before.messages)
    assert ids(asked.messages)[len(before.messages) :] == ["q3"]
    answered = pack_turns(chat, 16, backend)  # the call and its output (14 tokens) do not
    assert ids(answered.messages) == ["s", "q2", "c2", "t2", "a2", "q3", "c3", "t3"]


def test_without_stable_the_metadata_says_the_system_messages_stay(backend: str) -> None:
    packed = pack_messages(
        history(), skeleton_budget=40, token_counter=by_id, with_metadata=True, backend=backend
    )
    assert packed.stable_prefix == 1
    messages, _metadata, stable_prefix = packed
    assert (ids(messages), stable_prefix) == (["s", "h1", "h2", "a3", "h3"], 1)


def test_a_later_system_message_is_not_promised_when_messages_before_it_were_left_out(
    backend: str,
) -> None:
    def by_number(message: BaseMessage) -> int:  # the count ends the text
        return int(message.text.split()[-1])

    kinds = {"S": SystemMessage, "H": HumanMessage, "A": AIMessage}
    chat = [
        kinds[text[0]](text, id=text.split()[0])
        for text in ("S0 9", "H1 5", "H2 45", "A3 18", "S4 13", "H5 39", "S6 11")
    ]
    pack = functools.partial(
        pack_messages,
        skeleton_budget=80,
        token_counter=by_number,
        strategy="density",
        with_metadata=True,
        backend=backend,
    )
    before = pack(chat[:-1])
    assert ids(before.messages) == ["S0", "S4", "H5"]
    # S4 follows S0 only while H1 to A3 are left out: one of them may come back.
    assert before.stable_prefix == 1
    after = pack(chat)  # grown by 11 tokens, within the 19 left
    assert ids(after.messages) == ["S0", "H1", "S4", "H5", "S6"]


def test_a_budget_past_what_a_float_holds_packs_stably(backend: str) -> None:
    chat = [SystemMessage("s", id="s"), HumanMessage("hi", id="h1"), AIMessage("yo", id="a1")]
    chat.append(HumanMessage("q", id="h2"))
    packed = pack_messages(
        chat,
        skeleton_budget=10**400,
        token_counter=lambda message: 10,
        stable=True,
        with_metadata=True,
        backend=backend,
    )
    assert (ids(packed.messages), packed.stable_prefix) == (["s", "h1", "a1", "h2"], 4)


def test_tool_call_arguments_that_are_not_json_are_named(backend: str) -> None:
    chat = [
        HumanMessage("When is the invoice due?"),
        AIMessage("", tool_calls=[tool_call("c1", "due", after=datetime.date(2024, 1, 1))]),
        ToolMessage("2024-02-01", tool_call_id="c1"),
    ]
    expected = (
        r"^messages\[1\]: the arguments of tool call 'due' are not JSON \(Object of type date "
        r"is not JSON serializable\)$"
    )
    for stable in (False, True):
        with pytest.raises(TypeError, match=expected):
            pack_messages(
                chat,
                skeleton_budget=100,
                token_counter=TokenCounter("o200k_base"),
                stable=stable,
                backend=backend,
            )


def test_a_runnable_packs_stably_too(backend: str) -> None:
    chat = chat_of_turns()
    packer = pack_messages(
        skeleton_budget=60, token_counter=turn_tokens, stable=True, backend=backend
    )
    assert ids(packer.invoke(chat[:13])) == ["s", "q1", "c1", "t1", "a1", "q2", "c2", "t2", "a2"]


@st.composite
def growing_chats(draw: st.DrawFn) -> tuple[list[BaseMessage], list[int]]:
    """A conversation, and its length at each model request: after a question, and after the
    answers to a round of calls. Turns of a question and up to three steps, each a reply or
    parallel calls answered in any order, outputs short or long."""
    messages: list[BaseMessage] = [SystemMessage(draw(WORDS))] if draw(st.booleans()) else []
    requests: list[int] = []
    made = 0
    for _ in range(draw(st.integers(1, 12))):
        messages.append(HumanMessage(draw(WORDS)))
        requests.append(len(messages))
        for _ in range(draw(st.integers(0, 3))):
            width = draw(st.integers(0, 3))
            if width == 0:
                messages.append(AIMessage(draw(WORDS)))
                continue
            call_ids = [f"call_{made + k}" for k in range(width)]
            made += width
            messages.append(calls(None, *call_ids, text=draw(WORDS)))
            for call_id in draw(st.permutations(call_ids)):
                output = draw(st.one_of(WORDS, WORDS, LONG_OUTPUT))
                messages.append(ToolMessage(output, tool_call_id=call_id))
            requests.append(len(messages))
    return messages, requests


def starts_with(longer: Sequence[BaseMessage], prefix: Sequence[BaseMessage]) -> bool:
    return len(longer) >= len(prefix) and all(a is b for a, b in zip(longer, prefix))


def breaks_allowed(totals: Sequence[int], step: int) -> int:
    """At most one break per step of new conversation (when it grows at all)."""
    return -(-(totals[-1] - totals[0]) // step)


@FUZZ
@given(
    chat=growing_chats(),
    budget=st.integers(0, 600),
    step=st.sampled_from([0.05, 0.25, 0.5, 1.0]),
    start_on_human=st.booleans(),
)
def test_stable_histories_only_grow_between_rare_breaks(
    backend: str,
    chat: tuple[list[BaseMessage], list[int]],
    budget: int,
    step: float,
    start_on_human: bool,
) -> None:
    messages, requests = chat
    packed = [
        pack_messages(
            messages[:size],
            skeleton_budget=budget,
            token_counter=fuzz_count,
            stable=True,
            stable_step=step,
            start_on_human=start_on_human,
            with_metadata=True,
            backend=backend,
        )
        for size in requests
    ]
    totals = [sum(map(fuzz_count, messages[:size])) for size in requests]
    for size, result in zip(requests, packed):
        assert_valid(result.messages, messages[:size], fuzz_count, budget,
                     start_on_human=start_on_human)  # fmt: skip
    # What each packing promises the next.
    for index in range(1, len(packed)):
        before, now = packed[index - 1], packed[index]
        room = budget - before.metadata.compressed_tokens
        if totals[index] - totals[index - 1] <= room:
            assert starts_with(now.messages, before.messages[: before.stable_prefix])
    # Over each run of packings by the rule (the whole history promised), one break at most
    # per step of new conversation.
    by_rule = [result.stable_prefix == len(result.messages) for result in packed]
    quantum = max(1, int(step * budget))
    run: list[int] = []
    for index, made_by_rule in enumerate([*by_rule, False]):
        if made_by_rule:
            run.append(index)
            continue
        if len(run) > 1:
            breaks = sum(
                not starts_with(packed[i].messages, packed[i - 1].messages) for i in run[1:]
            )
            assert breaks <= breaks_allowed([totals[i] for i in run], quantum)
        run = []


def positions_in(messages: Sequence[BaseMessage], kept: Sequence[BaseMessage]) -> list[int]:
    where = {id(message): index for index, message in enumerate(messages)}
    return [where[id(message)] for message in kept]


@FUZZ
@given(
    chat=growing_chats(),
    budget=st.integers(0, 600),
    step=st.sampled_from([0.05, 0.25, 1.0]),
    strategy=st.sampled_from(["greedy", "prefix", "optimal"]),
)
def test_stable_packings_are_the_same_on_both_backends(
    chat: tuple[list[BaseMessage], list[int]], budget: int, step: float, strategy: str
) -> None:
    messages, requests = chat
    for size in requests:
        rust, python = (
            pack_messages(
                messages[:size],
                skeleton_budget=budget,
                token_counter=fuzz_count,
                stable=True,
                stable_step=step,
                strategy=strategy,
                with_metadata=True,
                backend=backend,
            )
            for backend in ("rust", "python")
        )
        assert positions_in(messages, rust.messages) == positions_in(messages, python.messages)
        assert (rust.metadata, rust.stable_prefix) == (python.metadata, python.stable_prefix)


# --- images and other non-text blocks -------------------------------------------------------


def tokens_of(messages: list[BaseMessage], backend: str, **options: object) -> int:
    packed = pack_messages(
        messages,
        skeleton_budget=10**6,
        token_counter=O200K,
        with_metadata=True,
        backend=backend,
        **options,  # type: ignore[arg-type]
    )
    return packed.metadata.original_tokens


def test_the_issue_a_base64_image_counts_by_its_size(backend: str) -> None:
    # Issue 41: a message holding a 5,000-character base64 image counted as 6 tokens.
    png = images.png(800, 600, note=3_600)
    url = images.data_url(png)
    assert 4_900 < len(url) < 5_100
    text = "What is in this picture?"
    message = HumanMessage(
        [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": url}}]
    )
    counted = tokens_of([message], backend)
    assert counted == O200K.count(text) + MESSAGE_OVERHEAD + image_tokens(800, 600)
    assert image_tokens(800, 600) == 765  # OpenAI's 4 tiles over Anthropic's 640
    assert counted > 700


PNG = images.png(800, 600)  # 765 tokens
JPEG = images.jpeg(1000, 1000)  # 1,334 tokens (Anthropic's figure)
GIF = images.gif(320, 200)  # 255 tokens (one tile)
WEBP = images.webp_lossless(2000, 3000)
KNOWN = {"png": image_tokens(800, 600), "jpeg": 1334, "gif": 255, "webp": image_tokens(2000, 3000)}
URL = "https://example.com/cat.png"

BLOCKS: list[tuple[str, dict[str, object], int | None]] = [
    # (name, block, tokens; None for the default)
    (
        "openai data url",
        {"type": "image_url", "image_url": {"url": images.data_url(PNG)}},
        KNOWN["png"],
    ),
    (
        "openai data url, a str",
        {"type": "image_url", "image_url": images.data_url(GIF, "image/gif")},
        KNOWN["gif"],
    ),
    ("openai url", {"type": "image_url", "image_url": {"url": URL, "detail": "low"}}, None),
    (
        "v1 base64",
        {"type": "image", "base64": images.b64(JPEG), "mime_type": "image/jpeg"},
        KNOWN["jpeg"],
    ),
    ("v1 url", {"type": "image", "url": URL}, None),
    ("v1 file id", {"type": "image", "file_id": "file-abc123"}, None),
    (
        "v0 base64",
        {
            "type": "image",
            "source_type": "base64",
            "data": images.b64(WEBP),
            "mime_type": "image/webp",
        },
        KNOWN["webp"],
    ),
    ("v0 url", {"type": "image", "source_type": "url", "url": URL}, None),
    (
        "anthropic base64",
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": images.b64(PNG)},
        },
        KNOWN["png"],
    ),
    ("anthropic url", {"type": "image", "source": {"type": "url", "url": URL}}, None),
    (
        "responses input_image",
        {"type": "input_image", "image_url": images.data_url(JPEG, "image/jpeg")},
        KNOWN["jpeg"],
    ),
    ("google media, bytes", {"type": "media", "mime_type": "image/gif", "data": GIF}, KNOWN["gif"]),
    ("google media, audio", {"type": "media", "mime_type": "audio/wav", "data": b"RIFF"}, None),
    (
        "not an image's bytes",
        {"type": "image", "base64": images.b64(b"GIF8 no"), "mime_type": "image/gif"},
        None,
    ),
    (
        "v1 file",
        {"type": "file", "base64": images.b64(b"%PDF-1.7"), "mime_type": "application/pdf"},
        None,
    ),
    (
        "openai file",
        {
            "type": "file",
            "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"},
        },
        None,
    ),
    ("v1 audio", {"type": "audio", "base64": "UklGRg==", "mime_type": "audio/wav"}, None),
    (
        "openai input_audio",
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        None,
    ),
    ("v1 video", {"type": "video", "url": "https://example.com/a.mp4"}, None),
    (
        "anthropic document",
        {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}},
        None,
    ),
    ("plain text file, by url", {"type": "text-plain", "url": "https://example.com/a.txt"}, None),
]


@pytest.mark.parametrize(
    ("block", "tokens"),
    [(block, tokens) for _, block, tokens in BLOCKS],
    ids=[b[0] for b in BLOCKS],
)
def test_each_block_shape_counts(
    backend: str, block: dict[str, object], tokens: int | None
) -> None:
    expected = DEFAULT_MEDIA_TOKENS if tokens is None else tokens
    for message in (
        HumanMessage([block]),
        AIMessage([block]),
        ToolMessage([block], tool_call_id="c"),
    ):
        messages = [calls(None, "c"), message] if isinstance(message, ToolMessage) else [message]
        assert tokens_of(messages, backend) - tokens_of(messages[:-1], backend) == (
            MESSAGE_OVERHEAD + expected
        )
    # The option sets what a block of unknown size counts; a known size keeps its figure.
    assert tokens_of([HumanMessage([block])], backend, media_tokens=40) == MESSAGE_OVERHEAD + (
        40 if tokens is None else tokens
    )


def test_text_blocks_and_blocks_a_model_is_not_sent_as_media_count_as_before(backend: str) -> None:
    blocks: list[str | dict[str, object]] = [
        "Look: ",
        {"type": "text", "text": "two images"},
        {"type": "text-plain", "text": " and a note", "mime_type": "text/plain"},
        {"type": "tool_use", "id": "c1", "name": "zoom", "input": {}},
        {"type": "image_url", "image_url": {"url": URL}},
        {"type": "image", "url": URL},
        {"type": ["image"]},
        "not a block",
    ]
    expected = O200K.count("Look: two images and a notenot a block") + MESSAGE_OVERHEAD
    assert tokens_of([HumanMessage(blocks)], backend) == expected + 2 * DEFAULT_MEDIA_TOKENS
    assert tokens_of([HumanMessage(blocks)], backend, media_tokens=0) == expected


def test_a_callable_counter_counts_the_whole_message_itself(backend: str) -> None:
    message = HumanMessage([{"type": "image_url", "image_url": {"url": images.data_url(PNG)}}])
    packed = pack_messages(
        [message],
        skeleton_budget=100,
        token_counter=lambda message: 7,
        media_tokens=3,
        with_metadata=True,
        backend=backend,
    )
    assert packed.metadata.original_tokens == 7


def test_a_runnable_counts_the_images_of_messages_it_remembers(backend: str) -> None:
    chat = [
        HumanMessage(["Compare:", {"type": "image", "base64": images.b64(PNG)}]),
        AIMessage("They differ."),
        HumanMessage([{"type": "image", "url": URL}]),
    ]
    packer = pack_messages(
        skeleton_budget=10**6, token_counter=O200K, with_metadata=True, backend=backend
    )
    first = packer.invoke(chat)
    assert first.metadata.original_tokens == tokens_of(chat, backend)
    assert packer.invoke(chat) == first
    assert first.metadata.original_tokens == (
        O200K.count("Compare:") + O200K.count("They differ.") + 3 * MESSAGE_OVERHEAD
        + KNOWN["png"] + DEFAULT_MEDIA_TOKENS
    )  # fmt: skip


def test_a_history_of_images_packed_to_a_budget_fits_it(backend: str) -> None:
    # Each turn a screenshot and a question, each answer a line: counting only their text,
    # every message fits a budget the images alone overflow many times over.
    shots = [images.png(1280, 720), images.jpeg(1920, 1080), images.webp_lossy(1000, 1000)]
    sizes = [(1280, 720), (1920, 1080), (1000, 1000)]
    chat: list[BaseMessage] = [SystemMessage("You review screenshots.")]
    sent: list[int] = [O200K.count("You review screenshots.") + MESSAGE_OVERHEAD]
    for turn in range(9):
        shot, size = shots[turn % 3], sizes[turn % 3]
        question = f"What changed in screen {turn}?"
        chat.append(
            HumanMessage(
                [{"type": "text", "text": question}, {"type": "image", "base64": images.b64(shot)}]
            )
        )
        sent.append(O200K.count(question) + MESSAGE_OVERHEAD + image_tokens(*size))
        answer = f"Screen {turn} moved the toolbar."
        chat.append(AIMessage(answer))
        sent.append(O200K.count(answer) + MESSAGE_OVERHEAD)
    budget = 4_000
    positions = {id(message): index for index, message in enumerate(chat)}

    def real_tokens(kept: list[BaseMessage]) -> int:
        return sum(sent[positions[id(message)]] for message in kept)

    packed = pack_messages(
        chat, skeleton_budget=budget, token_counter=O200K, with_metadata=True, backend=backend
    )
    assert packed.metadata.original_tokens == sum(sent) > 3 * budget
    assert real_tokens(packed.messages) == packed.metadata.compressed_tokens <= budget
    assert not packed.metadata.over_budget
    assert sum(isinstance(message.content, list) for message in packed.messages) == 3
    # What counting the text alone keeps: every message, several times the budget.
    text_only = pack_messages(
        chat,
        skeleton_budget=budget,
        token_counter=lambda message: O200K.count(message.text) + MESSAGE_OVERHEAD,
        backend=backend,
    )
    assert text_only == chat
    assert real_tokens(text_only) > 3 * budget
