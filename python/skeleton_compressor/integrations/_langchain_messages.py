"""A chat-history packer for LangChain, a rival to `langchain_core.messages.trim_messages`
that never breaks a tool call: the system messages and the latest human message pinned, each
AI message with tool calls kept or dropped together with every tool message answering it,
the rest chosen by the library's strategies, the result in the original order."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, TypeAlias, Union, cast, overload

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableLambda

from .. import _messages
from ..tokens import TokenCounter
from ..types import (
    BackendName,
    EncodingName,
    OnOverflowName,
    SkeletonMetadata,
    StrategyName,
)
from . import _media
from ._history import MessageShape
from ._media import DEFAULT_MEDIA_TOKENS
from ._packing import Packing, not_item_error
from ._stable_history import DEFAULT_STEP, StablePacking, checked_step, pack_chat_history

__all__ = ["DEFAULT_MEDIA_TOKENS", "MESSAGE_OVERHEAD", "PackedMessages", "pack_messages"]

CONTAINER = "messages"

MESSAGE_OVERHEAD = 3
"""Tokens added to each message counted with a `TokenCounter` or an encoding name: the chat
format's wrapping of a message (role and delimiters; OpenAI's guide counts 3 a message)."""

MessagesInput: TypeAlias = Sequence[BaseMessage] | PromptValue
MessageTokenCounter: TypeAlias = TokenCounter | EncodingName | Callable[[BaseMessage], int]


class PackedMessages(NamedTuple):
    """What `pack_messages(..., with_metadata=True)` returns: the kept messages (the very
    objects passed in, in their original order), the library's metadata (tokens before and
    after, the budget, messages kept of how many, relevance kept of the most any selection
    could keep), and `stable_prefix`: how many of the kept messages the next packing of the
    conversation starts with, when it has grown only by messages that fit in the room this
    packing leaves (`metadata.skeleton_budget - metadata.compressed_tokens` tokens). A cache
    breakpoint on `messages[stable_prefix - 1]` is read back by that packing. With
    `stable=True` that is every kept message (unless the rule fell back to the relevance
    packing); otherwise the system messages the conversation starts with."""

    messages: list[BaseMessage]
    metadata: SkeletonMetadata
    stable_prefix: int = 0


@overload
def pack_messages(
    messages: MessagesInput,
    *,
    skeleton_budget: int,
    token_counter: MessageTokenCounter | None = None,
    media_tokens: int = DEFAULT_MEDIA_TOKENS,
    relevance: Callable[[BaseMessage], float] | None = None,
    start_on_human: bool = True,
    stable: bool = False,
    stable_step: float = DEFAULT_STEP,
    with_metadata: Literal[False] = False,
    strategy: StrategyName = "greedy",
    min_relevance: float = 0.0,
    on_overflow: OnOverflowName = "keep_top",
    backend: BackendName = "auto",
) -> list[BaseMessage]: ...


@overload
def pack_messages(
    messages: MessagesInput,
    *,
    skeleton_budget: int,
    token_counter: MessageTokenCounter | None = None,
    media_tokens: int = DEFAULT_MEDIA_TOKENS,
    relevance: Callable[[BaseMessage], float] | None = None,
    start_on_human: bool = True,
    stable: bool = False,
    stable_step: float = DEFAULT_STEP,
    with_metadata: Literal[True],
    strategy: StrategyName = "greedy",
    min_relevance: float = 0.0,
    on_overflow: OnOverflowName = "keep_top",
    backend: BackendName = "auto",
) -> PackedMessages: ...


@overload
def pack_messages(
    messages: None = None,
    *,
    skeleton_budget: int,
    token_counter: MessageTokenCounter | None = None,
    media_tokens: int = DEFAULT_MEDIA_TOKENS,
    relevance: Callable[[BaseMessage], float] | None = None,
    start_on_human: bool = True,
    stable: bool = False,
    stable_step: float = DEFAULT_STEP,
    with_metadata: Literal[False] = False,
    strategy: StrategyName = "greedy",
    min_relevance: float = 0.0,
    on_overflow: OnOverflowName = "keep_top",
    backend: BackendName = "auto",
) -> Runnable[MessagesInput, list[BaseMessage]]: ...


@overload
def pack_messages(
    messages: None = None,
    *,
    skeleton_budget: int,
    token_counter: MessageTokenCounter | None = None,
    media_tokens: int = DEFAULT_MEDIA_TOKENS,
    relevance: Callable[[BaseMessage], float] | None = None,
    start_on_human: bool = True,
    stable: bool = False,
    stable_step: float = DEFAULT_STEP,
    with_metadata: Literal[True],
    strategy: StrategyName = "greedy",
    min_relevance: float = 0.0,
    on_overflow: OnOverflowName = "keep_top",
    backend: BackendName = "auto",
) -> Runnable[MessagesInput, PackedMessages]: ...


def pack_messages(
    messages: MessagesInput | None = None,
    *,
    skeleton_budget: int,
    token_counter: MessageTokenCounter | None = None,
    media_tokens: int = DEFAULT_MEDIA_TOKENS,
    relevance: Callable[[BaseMessage], float] | None = None,
    start_on_human: bool = True,
    stable: bool = False,
    stable_step: float = DEFAULT_STEP,
    with_metadata: bool = False,
    strategy: StrategyName = "greedy",
    min_relevance: float = 0.0,
    on_overflow: OnOverflowName = "keep_top",
    backend: BackendName = "auto",
) -> (
    list[BaseMessage]
    | PackedMessages
    | Runnable[MessagesInput, list[BaseMessage]]
    | Runnable[MessagesInput, PackedMessages]
):
    """The messages of a chat history that fit `skeleton_budget` tokens, always a valid
    history for chat APIs: every `SystemMessage` and the latest `HumanMessage` kept, each
    `AIMessage` making tool calls kept or dropped together with every `ToolMessage` answering
    one of them (by `tool_call_id`), and, with `start_on_human`, the first message after the
    system messages a `HumanMessage`. The other messages are chosen by the library's
    `strategy` by relevance, and come back as the very objects passed in, in their original
    order. A `ChatMessage` of role `system` counts as a system message, of role `user` or
    `human` as a human one; other messages are chosen like replies.

    Without `messages`, returns a `Runnable` doing the same (the options checked now), to
    chain as `prompt | pack_messages(skeleton_budget=...) | model`.

    Args:
        messages: `BaseMessage` objects, or a `PromptValue` (its `to_messages()`).
        skeleton_budget: the tokens the kept messages may take, an int >= 0.
        token_counter: a callable `BaseMessage -> int` counting a whole message; or a
            `TokenCounter` or encoding name (default `"o200k_base"`), which counts the text a
            model is sent: the text content (text blocks of a list content), the names and
            JSON arguments of an AI message's tool calls, plus `MESSAGE_OVERHEAD` (3) tokens
            a message, plus an estimate for each image, audio, video, file or document
            block (below). A callable counts the whole message, those blocks included: the
            estimate is not added to its count.
        media_tokens: the tokens the built-in counting adds for a non-text block whose size
            it does not know (an image given by URL or file id, or not a PNG, JPEG, GIF or
            WebP; audio, video, files, documents), an int >= 0 (default
            `DEFAULT_MEDIA_TOKENS`, 1,600). An image inline in base64 (a data URL, or a
            block's base64 data) counts by its size instead: the larger of OpenAI's
            high-detail figure and Anthropic's, at most 1,600 (docs/integrations/
            langchain-messages.md).
        relevance: a callable `BaseMessage -> float` in [0, 1]; by default recency: of `n`
            messages, the one at index `i` scores `(i + 1) / n`, the latest 1.0. A tool call
            and its answers rank by their best (the latest answer's) score.
        start_on_human: make the history start, after the system messages, on a
            `HumanMessage`: when the selection starts elsewhere, the human message opening
            that turn is kept and everything before it (system messages aside) dropped, and
            the rest chosen again; when it does not fit, a later turn (the latest human
            message at worst). Without a `HumanMessage` at all, only the system messages
            are kept.
        stable: keep the history stable from turn to turn, for a provider's prompt cache:
            the system messages and everything from a cut on, the cut moving only when the
            conversation outgrows the budget, and then only to one of a few points the
            conversation fixes, `stable_step` of the budget apart (each cut inside a turn
            keeps that turn's human message too). A turn that only appends keeps the
            previous packing as its prefix until such a move. `relevance`, `strategy` and
            `min_relevance` then apply only when no cut fits (a tool output about as large
            as the budget), where the relevance packing takes over. Off by default: it
            keeps less of the budget, which pays only where the provider caches prompts.
        stable_step: the tokens between cut points, as a share of `skeleton_budget`, a
            real number in (0, 1] (default 0.25): larger moves the cut less often and keeps
            less of the budget on average.
        with_metadata: return `PackedMessages(messages, metadata, stable_prefix)` instead of
            the list.
        strategy: `"greedy"`, `"prefix"` (the latest messages up to the first that does not
            fit, like `trim_messages(strategy="last")`), `"density"` or `"optimal"`.
        min_relevance: messages scored below it are left out, pinned ones aside.
        on_overflow: when the pinned messages alone exceed the budget, `"keep_top"` keeps
            them (and only them: `metadata.over_budget` says so); `"strict"` and `"raise"`
            raise `BudgetExceededError`.
        backend: `"auto"`, `"rust"` or `"python"`.

    Raises:
        TypeError: an item that is not a `BaseMessage` (naming `messages[i]`), bad options.
        ValueError: a `ToolMessage` answering a call no earlier message makes (naming
            `messages[i]`; an answer goes with the latest earlier call of its id), bad
            option values.
        FragmentTypeError, FragmentValueError: a bad token count or relevance score from
            a callable, naming `messages[i]` and its id.
        BudgetExceededError: under `on_overflow="strict"` or `"raise"`, as above.
    """
    counts_messages = _checked_counter(token_counter)
    if relevance is not None and not callable(relevance):
        raise TypeError(
            "relevance must be None or a callable BaseMessage -> float, got "
            f"{_messages._typed(relevance)}"
        )
    flags = (
        ("start_on_human", start_on_human),
        ("stable", stable),
        ("with_metadata", with_metadata),
    )
    for name, flag in flags:
        if type(flag) is not bool:
            raise TypeError(f"{name} must be a bool, got {_messages._typed(flag)}")
    step = checked_step(stable_step)
    media = _media.checked_media_tokens(media_tokens)
    packing = Packing(
        skeleton_budget,
        token_counter,  # type: ignore[arg-type]  # a message callable: never given a str
        strategy=strategy,
        min_relevance=min_relevance,
        on_overflow=on_overflow,
        order="input",
        backend=backend,
    )
    packer = _MessagePacker(
        packing,
        cast("Callable[[BaseMessage], int]", token_counter) if counts_messages else None,
        media,
        relevance,
        start_on_human,
        step if stable else None,
        with_metadata,
        # A chain sends the history again, grown, each turn: the Runnable remembers counts.
        _RememberedCounts() if messages is None and not counts_messages else None,
    )
    if messages is None:
        runnable: Runnable[MessagesInput, Any] = RunnableLambda(packer, name="pack_messages")
        return runnable
    return packer(messages)


class _MessagePacker:
    """`pack_messages` with its options checked: a class of its own, not a closure, so that
    the `Runnable` made of it pickles."""

    def __init__(
        self,
        packing: Packing,
        message_counter: Callable[[BaseMessage], int] | None,
        media: int,
        relevance: Callable[[BaseMessage], float] | None,
        start_on_human: bool,
        step: float | None,
        with_metadata: bool,
        remembered: _RememberedCounts | None,
    ) -> None:
        self.packing = packing
        self.message_counter = message_counter
        self.media = media
        self.relevance = relevance
        self.start_on_human = start_on_human
        self.step = step
        self.with_metadata = with_metadata
        self.remembered = remembered

    # The types themselves, not their names (this module's annotations are strings), so that
    # the `Runnable`'s input and output schemas can be made.
    __signature__ = inspect.Signature(
        [inspect.Parameter("given", inspect.Parameter.POSITIONAL_ONLY, annotation=MessagesInput)],
        return_annotation=Union[list[BaseMessage], PackedMessages],
    )

    def __call__(self, given: MessagesInput) -> list[BaseMessage] | PackedMessages:
        items = _message_list(given)
        packed = _pack(
            self.packing,
            items,
            self.message_counter,
            self.media,
            self.relevance,
            self.start_on_human,
            self.step,
            self.remembered,
        )
        chosen = [items[index] for index in packed.kept]
        if self.with_metadata:
            return PackedMessages(chosen, packed.metadata, packed.stable_prefix)
        return chosen


def _checked_counter(token_counter: object) -> bool:
    """Whether `token_counter` counts messages (a callable) rather than texts; TypeError for
    anything that is neither."""
    if token_counter is None or isinstance(token_counter, str | TokenCounter):
        return False
    if callable(token_counter):
        return True
    raise TypeError(
        "token_counter must be a TokenCounter, an encoding name or a callable "
        f"BaseMessage -> int, got {_messages._typed(token_counter)}"
    )


def _message_list(messages: object) -> list[BaseMessage]:
    if isinstance(messages, PromptValue):
        return messages.to_messages()
    # A mapping's keys would pass for the messages (a chain's input dict passed whole).
    unlisted = (str, bytes, BaseMessage, Mapping)
    if isinstance(messages, unlisted) or not isinstance(messages, Iterable):
        raise TypeError(
            "messages must be a sequence of langchain_core BaseMessage or a PromptValue, got "
            f"{_messages._typed(messages)}"
        )
    items = list(messages)
    for index, item in enumerate(items):
        if not isinstance(item, BaseMessage):
            raise not_item_error(
                CONTAINER,
                index,
                item,
                "a langchain_core BaseMessage (convert_to_messages makes them of dicts, tuples "
                "and strings)",
            )
    return items


def _pack(
    packing: Packing,
    messages: list[BaseMessage],
    count_message: Callable[[BaseMessage], int] | None,
    media_tokens: int,
    relevance: Callable[[BaseMessage], float] | None,
    start_on_human: bool,
    stable_step: float | None,
    remembered: _RememberedCounts | None = None,
) -> StablePacking:
    size = len(messages)
    ids = [message.id for message in messages]
    shapes = _shapes(messages)
    if count_message is None:
        texts = [_text_sent(message, index) for index, message in enumerate(messages)]
        counted = (
            packing.token_counts(texts, CONTAINER)
            if remembered is None
            else remembered.counts(messages, texts, packing.token_counts)
        )
        counts: list[Any] = [
            count + MESSAGE_OVERHEAD + _media_sent(message, media_tokens)
            for message, count in zip(messages, counted)
        ]
    else:
        counts = [count_message(message) for message in messages]
    if relevance is None:
        scores: list[Any] = [(index + 1) / size for index in range(size)]
    else:
        scores = [relevance(message) for message in messages]
    return pack_chat_history(
        packing,
        shapes,
        counts,
        scores,
        CONTAINER,
        stable_step=stable_step,
        start_on_turn=start_on_human,
        ids=ids,
    )


class _RememberedCounts:
    """The text counts of the latest call's messages, by message object. An entry serves only
    the very text it counted, so a message changed since, or another one now where a freed
    one was, is counted again; only the latest call's are kept, so memory stays one history's.
    """

    __slots__ = ("_latest",)

    def __init__(self) -> None:
        self._latest: dict[int, tuple[str, int]] = {}

    def __reduce__(self) -> tuple[type[_RememberedCounts], tuple[()]]:
        # Keyed by the messages' ids, which mean nothing in another process: a copy starts
        # empty.
        return _RememberedCounts, ()

    def counts(
        self,
        messages: Sequence[BaseMessage],
        texts: list[str],
        count_texts: Callable[[list[str], str], list[int]],
    ) -> list[int]:
        latest = self._latest
        counts = [0] * len(texts)
        missing = []
        for index, (message, text) in enumerate(zip(messages, texts)):
            entry = latest.get(id(message))
            if entry is not None and entry[0] == text:
                counts[index] = entry[1]
            else:
                missing.append(index)
        if missing:
            fresh = count_texts([texts[index] for index in missing], CONTAINER)
            for index, count in zip(missing, fresh):
                counts[index] = count
        # Replaced whole, never changed in place: calls running at once on other threads
        # each read a complete one.
        self._latest = {
            id(message): (text, count) for message, text, count in zip(messages, texts, counts)
        }
        return counts


_PLAIN = MessageShape()
_SYSTEM = MessageShape(pinned=True, system=True)
_HUMAN = MessageShape(opens_turn=True)
_LATEST_HUMAN = MessageShape(pinned=True, opens_turn=True)


def _shapes(messages: Sequence[BaseMessage]) -> list[MessageShape]:
    shapes: list[MessageShape] = []
    latest_human = None
    for index, message in enumerate(messages):
        role = message.role if isinstance(message, ChatMessage) else None
        if isinstance(message, SystemMessage) or role == "system":
            shapes.append(_SYSTEM)
        elif isinstance(message, HumanMessage) or role in ("user", "human"):
            latest_human = index
            shapes.append(_HUMAN)
        elif isinstance(message, AIMessage):
            calls = _call_ids(message)
            shapes.append(MessageShape(calls=calls) if calls else _PLAIN)
        elif isinstance(message, ToolMessage):
            shapes.append(MessageShape(answers=(message.tool_call_id,)))
        else:
            shapes.append(_PLAIN)
    if latest_human is not None:
        shapes[latest_human] = _LATEST_HUMAN
    return shapes


def _call_ids(message: AIMessage) -> tuple[str, ...]:
    """The ids of the calls a tool message may answer: the parsed tool calls and the ones
    that failed to parse (`invalid_tool_calls`, which chat model integrations send to the API
    as tool calls too, so that their answers must follow them)."""
    if not message.tool_calls and not message.invalid_tool_calls:
        return ()
    found = [call["id"] for call in message.tool_calls]
    found += [call["id"] for call in message.invalid_tool_calls]
    return tuple(call_id for call_id in found if call_id is not None)


# Blocks whose `text` a model reads: text, and LangChain's plain-text document given inline.
_TEXT_BLOCKS = ("text", "text-plain")


def _text_sent(message: BaseMessage, index: int) -> str:
    """The text of a message a model reads: its text content, and for an AI message the name
    and JSON arguments of each tool call (`messages[index]` named where they are not JSON)."""
    content = message.content
    if type(content) is str:
        text = content
    elif isinstance(content, str):
        text = str.__str__(content)
    else:
        text = "".join(
            block if isinstance(block, str) else str(block["text"])
            for block in content
            if isinstance(block, str)
            or (
                isinstance(block, dict)
                and block.get("type") in _TEXT_BLOCKS
                and isinstance(block.get("text"), str)
            )
        )
    if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
        parts = [text]
        for call in message.tool_calls:
            parts += (call["name"], _arguments_sent(call, index))
        for invalid in message.invalid_tool_calls:
            parts += (invalid["name"] or "", invalid["args"] or "")
        text = "\n".join(parts)
    return text


def _arguments_sent(call: ToolCall, index: int) -> str:
    try:
        return json.dumps(call["args"], ensure_ascii=False)
    except (TypeError, ValueError) as error:
        # A value JSON has no form for (a date, a set, bytes), or a loop of references.
        kind = TypeError if isinstance(error, TypeError) else ValueError
        raise kind(
            f"{CONTAINER}[{index}]: the arguments of tool call {call['name']!r} are not JSON "
            f"({error})"
        ) from None


# Content blocks a model is sent as an image: LangChain's standard `image` (its data under
# `base64`, or `data` with `source_type`, or a `url` or `file_id`), OpenAI's `image_url` and
# Responses `input_image`, Anthropic's `image` (its data under `source`); Google's `media`
# when its MIME type is an image's.
_IMAGE_BLOCKS = frozenset({"image", "image_url", "input_image"})
# Blocks a model is sent as some other medium, whose size is not read here.
_OTHER_MEDIA_BLOCKS = frozenset(
    {"audio", "input_audio", "video", "file", "input_file", "document", "media", "text-plain"}
)


def _media_sent(message: BaseMessage, default: int) -> int:
    """The tokens of the non-text blocks of a message's content (see `_media`): an image by
    its size where its data is inline, `default` for anything whose size is not known."""
    content = message.content
    if isinstance(content, str):
        return 0
    total = 0
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if type(kind) is not str:
            continue
        if kind in _IMAGE_BLOCKS or (kind == "media" and _is_image(block.get("mime_type"))):
            total += _media.source_tokens(_image_source(block), default)
        elif kind in _OTHER_MEDIA_BLOCKS and not (
            kind == "text-plain" and isinstance(block.get("text"), str)
        ):
            total += default
    return total


def _is_image(mime_type: object) -> bool:
    return isinstance(mime_type, str) and mime_type.lower().startswith("image/")


def _image_source(block: dict[str, Any]) -> object:
    """An image block's inline data (base64 text or bytes) or URL, whichever shape holds
    it; None for a file id."""
    for key in ("base64", "data"):
        value = block.get(key)
        if isinstance(value, str | bytes):
            return value
    source = block.get("source")
    if isinstance(source, dict):
        return source.get("data") or source.get("url")
    image_url = block.get("image_url")
    if isinstance(image_url, dict):
        image_url = image_url.get("url")
    if isinstance(image_url, str):
        return image_url
    return block.get("url")
