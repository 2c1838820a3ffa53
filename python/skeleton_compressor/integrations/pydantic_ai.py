"""pydantic-ai (2.x): a history processor that packs a conversation into a token budget and
never separates a tool call from its return. Importing this module imports pydantic-ai
(`pip install 'skeleton-compressor[pydantic-ai]'`).

Install it with the `ProcessHistory` capability::

    agent = Agent(model, capabilities=[ProcessHistory(SkeletonHistoryProcessor(2_000))])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Union

from pydantic_ai.messages import (
    BaseToolCallPart,
    BaseToolReturnPart,
    BinaryContent,
    CachePoint,
    CompactionPart,
    FilePart,
    FileUrl,
    ImageUrl,
    InstructionDeltaPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    SpeechPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
)

from ..tokens import TokenCounter
from ..types import (
    BackendName,
    EncodingName,
    OnOverflowName,
    SkeletonMetadata,
    StrategyName,
)
from . import _media
from ._history import MessageShape, ToolLinks
from ._media import DEFAULT_MEDIA_TOKENS
from ._packing import Packing, not_item_error
from ._stable_history import DEFAULT_STEP, checked_step, pack_chat_history

__all__ = [
    "DEFAULT_MEDIA_TOKENS",
    "PackedHistory",
    "SkeletonHistoryProcessor",
    "message_media_tokens",
    "message_text",
]

CONTAINER = "messages"

MessageCounter = Union[TokenCounter, EncodingName, Callable[[ModelMessage], int]]
"""A `TokenCounter` or an encoding's name (counting `message_text`), or a callable counting a
whole `ModelMessage`."""


class PackedHistory(NamedTuple):
    """What `SkeletonHistoryProcessor.pack` returns.

    messages: the kept messages, the very objects passed in, in their order.
    metadata: the library's `SkeletonMetadata` for the packing.
    stable_prefix: how many of the kept messages the next packing of the conversation
        starts with, when it has grown only by messages that fit in the room this packing
        leaves (`metadata.skeleton_budget - metadata.compressed_tokens` tokens): with
        `stable=True` every kept message (unless the rule fell back to the relevance
        packing), otherwise the requests holding only system prompts that the conversation
        starts with.
    """

    messages: list[ModelMessage]
    metadata: SkeletonMetadata
    stable_prefix: int = 0


class SkeletonHistoryProcessor:
    """A pydantic-ai history processor (`list[ModelMessage] -> list[ModelMessage]`) keeping the
    messages a token budget allows, with every tool call kept or dropped together with its
    return, for `ProcessHistory(processor)` or a direct call.

    Kept whatever the budget (pinned): the last message (the request about to be sent, or a
    suspended response being continued), every request holding a `SystemPromptPart` of scope
    "conversation", the latest request holding a `UserPromptPart`, and, when those would start
    on a response or on a request answering tool calls, the latest request before them that
    answers none (one holding a user prompt by preference), so that the history starts with a
    `ModelRequest`. A `ModelResponse` and the requests whose `ToolReturnPart`s (or
    `RetryPromptPart`s with a `tool_name`) answer its `ToolCallPart`s are one unit, kept or
    dropped whole; a unit holding a pinned message is kept. After the pinned requests leading
    it, the history starts on a turn when one fits: a request holding a user prompt or a
    `CompactionPart` and answering no call. The rest is chosen by the library's strategy; the
    kept messages come back in their order, as the very objects passed in.

    Args:
        skeleton_budget: the tokens the history may take, an int >= 0.
        token_counter: a `TokenCounter` or an encoding's name (`"o200k_base"`, the default,
            or `"cl100k_base"`), counting each message's `message_text`, plus an estimate for
            each image, audio, video, document or other file it carries (below); or a
            callable given each `ModelMessage` and returning its token count (an int >= 0),
            files included: the estimate is not added to its count.
        media_tokens: the tokens the built-in counting adds for a file whose size it does not
            know (an `ImageUrl` other than a base64 `data:` URL, an `UploadedFile`, bytes that
            are not a PNG, JPEG, GIF or WebP image; audio, video, documents), an int >= 0
            (default `DEFAULT_MEDIA_TOKENS`, 1,600). An image given as bytes
            (`BinaryContent`, `BinaryImage`, a model's `FilePart`) counts by its size: the
            larger of OpenAI's high-detail figure and Anthropic's, at most 1,600
            (docs/integrations/pydantic-ai.md). Files in user prompts, in tool returns and
            in a response's `FilePart`s count.
        relevance: a callable given each `ModelMessage` and returning its relevance in
            [0, 1]; None (the default) scores by recency: message i of n scores (i + 1) / n,
            so the latest scores 1.0 and a strategy keeps the most recent first.
        stable: keep the history stable from request to request, for a provider's prompt
            cache: the pinned requests before a cut and everything from the cut on, the cut
            moving only when the conversation outgrows the budget, and then only to one of
            a few points the conversation fixes, `stable_step` of the budget apart (a cut
            inside a turn keeps the request that opened it too). A request that only
            appends keeps the previous packing as its prefix until such a move.
            `relevance`, `strategy` and `min_relevance` then apply only when no cut fits,
            where the relevance packing takes over. Off by default: it keeps less of the
            budget, which pays only where the provider caches prompts.
        stable_step: the tokens between cut points, as a share of `skeleton_budget`, a
            real number in (0, 1] (default 0.25).
        strategy, min_relevance, on_overflow, backend: as for `SkeletonCompressorService`
            (`on_overflow` applies when the pinned units alone exceed the budget).

    Raises:
        TypeError, ValueError: bad options, the library's own errors (`relevance` not a
            callable is a TypeError).

    The metadata of the latest call is `last_metadata`, and its `stable_prefix` is
    `last_stable_prefix`; `pack` returns both with the messages.
    """

    __slots__ = (
        "_counted",
        "_counts_messages",
        "_media_tokens",
        "_packing",
        "_relevance",
        "_stable_step",
        "_token_counter",
        "last_metadata",
        "last_stable_prefix",
    )

    def __init__(
        self,
        skeleton_budget: int,
        token_counter: MessageCounter | None = None,
        *,
        media_tokens: int = DEFAULT_MEDIA_TOKENS,
        relevance: Callable[[ModelMessage], float] | None = None,
        stable: bool = False,
        stable_step: float = DEFAULT_STEP,
        strategy: StrategyName = "greedy",
        min_relevance: float = 0.0,
        on_overflow: OnOverflowName = "keep_top",
        backend: BackendName = "auto",
    ) -> None:
        if relevance is not None and not callable(relevance):
            raise TypeError(
                "relevance must be None or a callable ModelMessage -> float, "
                f"got {type(relevance).__name__}"
            )
        if type(stable) is not bool:
            raise TypeError(f"stable must be a bool, got {type(stable).__name__}")
        step = checked_step(stable_step)
        media = _media.checked_media_tokens(media_tokens)
        if token_counter is None or isinstance(token_counter, (str, TokenCounter)):
            counts_messages = False
        elif callable(token_counter):
            counts_messages = True
        else:
            raise TypeError(
                "token_counter must be a TokenCounter, an encoding name or a callable "
                f"ModelMessage -> int, got {token_counter!r} ({type(token_counter).__name__})"
            )
        # A callable is handed on too: the packing only checks it, the messages are counted here.
        self._packing = Packing(
            skeleton_budget,
            token_counter,  # type: ignore[arg-type]
            strategy=strategy,
            min_relevance=min_relevance,
            on_overflow=on_overflow,
            order="input",
            backend=backend,
        )
        self._token_counter = token_counter
        self._counts_messages = counts_messages
        self._media_tokens = media
        self._relevance = relevance
        self._stable_step = step if stable else None
        self._counted = _Counted()
        self.last_metadata: SkeletonMetadata | None = None
        self.last_stable_prefix: int | None = None

    def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The kept messages (see the class); `last_metadata` holds the metadata."""
        return self.pack(messages).messages

    def pack(self, messages: Sequence[ModelMessage]) -> PackedHistory:
        """The kept messages and the metadata.

        Raises:
            TypeError: `messages` is not a list or tuple, or holds something other than a
                `ModelRequest` or `ModelResponse` (named `messages[i]`).
            ValueError: a tool return answering a call no earlier response makes (named
                `messages[i]`).
            FragmentTypeError, FragmentValueError: a callable's bad token count or relevance,
                named `messages[i]`.
            BudgetExceededError: `on_overflow` "strict" or "raise" and the pinned units alone
                exceed the budget.
        """
        items = _checked(messages)
        shapes, groups = _read(items)
        if self._counts_messages:
            count = self._token_counter
            counts: list[object] = [count(message) for message in items]  # type: ignore[operator, misc]
        else:
            counted = self._counted.counts(items, self._packing.token_counts, self._media_tokens)
            counts = list(counted)
        if self._relevance is None:
            size = len(items)
            scores: list[object] = [(index + 1) / size for index in range(size)]
        else:
            score = self._relevance
            scores = [score(message) for message in items]
        packed = pack_chat_history(
            self._packing,
            shapes,
            counts,
            scores,
            CONTAINER,
            stable_step=self._stable_step,
            groups=groups,
        )
        self.last_metadata, self.last_stable_prefix = packed.metadata, packed.stable_prefix
        kept = [items[index] for index in packed.kept]
        return PackedHistory(kept, packed.metadata, packed.stable_prefix)


class _Counted:
    """Token counts of the latest call's messages, so that the history an agent sends again
    before each model request is not counted again. An entry serves a message whose parts are
    the very list it counted, of the same length (pydantic-ai never changes a message in
    place, and a message given new parts is counted again); only the latest call's are kept,
    so memory stays one history's."""

    __slots__ = ("_latest",)

    def __init__(self) -> None:
        # id(message) -> (its parts list, their number, the count)
        self._latest: dict[int, tuple[object, int, int]] = {}

    def counts(
        self,
        messages: Sequence[ModelMessage],
        count_texts: Callable[[list[str], str], list[int]],
        media_tokens: int,
    ) -> list[int]:
        latest = self._latest
        counts = [0] * len(messages)
        missing = []
        for index, message in enumerate(messages):
            entry = latest.get(id(message))
            parts = message.parts
            if entry is not None and entry[0] is parts and entry[1] == len(parts):
                counts[index] = entry[2]
            else:
                missing.append(index)
        if missing:
            fresh = count_texts([message_text(messages[index]) for index in missing], CONTAINER)
            for index, count in zip(missing, fresh):
                counts[index] = count + _media_tokens(messages[index], media_tokens)
        # Each parts list is held while its entry is, so a message at a freed one's address
        # has another list and is counted afresh.
        self._latest = {
            id(message): (message.parts, len(message.parts), count)
            for message, count in zip(messages, counts)
        }
        return counts


def message_text(message: ModelMessage) -> str:
    """The text a model is sent for `message`, as the default token counting reads it: its
    parts' texts joined by newlines.

    A system or user prompt, a text, thinking, compaction or speech transcript: its text (a
    user prompt's text items only: images, audio, documents and other files, here and in
    tool returns, are counted apart, by `message_media_tokens`).
    A tool call: its tool name and arguments as JSON. A tool return: its content as the model
    is sent it (`model_response_str()`). A retry: its feedback text. Other parts (settings,
    capability and tool-availability records, instruction records) add nothing, nor does a
    request's `instructions`: the agent sends the current instructions with each request,
    whatever the history holds.
    """
    texts = []
    for part in message.parts:
        text = (_READERS.get(type(part)) or _reader(type(part)))[1](part)
        if text:
            texts.append(text)
    return "\n".join(texts)


def message_media_tokens(message: ModelMessage, media_tokens: int = DEFAULT_MEDIA_TOKENS) -> int:
    """The tokens the default counting adds to `message_text`'s for the files `message`
    carries: the images, audio, video, documents and uploaded files of its user prompts and
    tool returns, and the files of a response (`FilePart`). An image given as bytes, or as a
    base64 `data:` URL, whose header gives its size, counts as the larger of OpenAI's
    high-detail figure and Anthropic's (at most 1,600); any other file `media_tokens`, an
    int >= 0 (TypeError or ValueError otherwise)."""
    return _media_tokens(message, _media.checked_media_tokens(media_tokens))


def _media_tokens(message: ModelMessage, default: int) -> int:
    total = 0
    for part in message.parts:
        if isinstance(part, UserPromptPart):
            content = part.content
            if not isinstance(content, str):
                total += sum(_file_tokens(item, default) for item in content)
        elif isinstance(part, BaseToolReturnPart):
            returned: object = part.content
            if isinstance(returned, _FILES):
                total += _file_tokens(returned, default)
            elif isinstance(returned, list):
                # A tool's other values are its text (model_response_str), files apart.
                files = [item for item in returned if isinstance(item, _FILES)]
                total += sum(_file_tokens(item, default) for item in files)
        elif isinstance(part, FilePart):
            total += _file_tokens(part.content, default)
    return total


_FILES = (BinaryContent, FileUrl, UploadedFile)


def _file_tokens(item: object, default: int) -> int:
    if isinstance(item, (str, TextContent, CachePoint)):
        return 0
    if isinstance(item, BinaryContent):
        if item.media_type.lower().startswith("image/"):
            return _media.source_tokens(item.data, default)
        return default
    if isinstance(item, ImageUrl):
        return _media.source_tokens(item.url, default)
    # AudioUrl, DocumentUrl, VideoUrl, UploadedFile, and whatever file types come later.
    return default


# What a part is to the packer, by type: its role, and how its text reads.
_OTHER, _USER, _OPENS, _SYSTEM, _ANSWER, _RETRY, _CALL = range(7)
_Reader = tuple[int, Callable[[Any], str]]
_READERS: dict[type, _Reader] = {}


def _reader(kind: type) -> _Reader:
    """The role and text of a part type, worked out once per type (subclasses included)."""
    found: _Reader
    if issubclass(kind, UserPromptPart):
        found = (_USER, _user_text)
    elif issubclass(kind, SystemPromptPart):
        found = (_SYSTEM, _content)
    elif issubclass(kind, (TextPart, ThinkingPart)):
        found = (_OTHER, _content)
    elif issubclass(kind, ToolCallPart):
        found = (_CALL, _call_text)
    elif issubclass(kind, BaseToolCallPart):
        found = (_OTHER, _call_text)
    elif kind is ToolReturnPart:
        found = (_ANSWER, _tool_return_text)
    elif issubclass(kind, ToolReturnPart):
        found = (_ANSWER, _return_text)
    elif issubclass(kind, BaseToolReturnPart):
        found = (_OTHER, _return_text)
    elif issubclass(kind, RetryPromptPart):
        found = (_RETRY, _retry_text)
    elif issubclass(kind, RetryFeedbackPart):
        found = (_OTHER, _retry_text)
    elif issubclass(kind, CompactionPart):
        found = (_OPENS, _optional_content)
    elif issubclass(kind, InstructionDeltaPart):
        found = (_OTHER, _optional_content)
    elif issubclass(kind, SpeechPart):
        found = (_OTHER, _transcript)
    else:
        found = (_OTHER, _no_text)
    _READERS[kind] = found
    return found


def _content(part: Any) -> str:
    text: str = part.content
    return text


def _optional_content(part: Any) -> str:
    return part.content or ""


def _user_text(part: UserPromptPart) -> str:
    content = part.content
    if isinstance(content, str):
        return content
    return "\n".join(
        item if isinstance(item, str) else item.content
        for item in content
        if isinstance(item, (str, TextContent))
    )


def _call_text(part: BaseToolCallPart[Any]) -> str:
    return f"{part.tool_name}\n{part.args_as_json_str()}"


def _return_text(part: BaseToolReturnPart[Any]) -> str:
    return part.model_response_str()


def _tool_return_text(part: ToolReturnPart) -> str:
    # What model_response_str() gives a successful text return, without its general path.
    content = part.content
    if type(content) is str and part.outcome == "success":
        return content
    return part.model_response_str()


def _retry_text(part: RetryFeedbackPart | RetryPromptPart) -> str:
    return part.model_response()


def _transcript(part: SpeechPart) -> str:
    return part.transcript or ""


def _no_text(part: object) -> str:
    return ""


def _checked(messages: object) -> Sequence[ModelMessage]:
    if not isinstance(messages, (list, tuple)):
        raise TypeError(
            f"messages must be a list of ModelRequest and ModelResponse objects, "
            f"got {type(messages).__name__}"
        )
    for index, message in enumerate(messages):
        if not isinstance(message, (ModelRequest, ModelResponse)):
            raise not_item_error(CONTAINER, index, message, "a ModelRequest or a ModelResponse")
    return messages


def _read(messages: Sequence[ModelMessage]) -> tuple[list[MessageShape], list[str | None]]:
    """Each message's shape and tool group. Call ids are paired by position, a return
    answering the latest earlier call with its id, so that a provider reusing ids across
    responses is read right; a response and the requests answering its calls are joined
    here (by index), so the shapes' ids are what a call or return holds."""
    readers = _READERS
    made_by: dict[str, int] = {}
    links = ToolLinks(len(messages))
    latest_user = -1
    shapes: list[MessageShape] = []
    for index, message in enumerate(messages):
        made: list[str] = []
        answered: list[str] = []
        has_system = has_user = opens = False
        is_request = isinstance(message, ModelRequest)
        parts: Sequence[Any] = message.parts
        for part in parts:
            role = (readers.get(type(part)) or _reader(type(part)))[0]
            if role == _OTHER:
                continue
            if not is_request:
                if role == _CALL:
                    made.append(part.tool_call_id)
                    made_by[part.tool_call_id] = index
            elif role == _USER:
                has_user = True
            elif role == _OPENS:
                opens = True  # a summary of what came before: a history may start on it
            elif role == _SYSTEM:
                has_system = has_system or part.scope == "conversation"
            elif role == _ANSWER or (role == _RETRY and part.tool_name is not None):
                call_id: str = part.tool_call_id
                caller = made_by.get(call_id)
                if caller is None:
                    raise ValueError(
                        f"{CONTAINER}[{index}] answers tool call {call_id!r}, "
                        "which no earlier message makes"
                    )
                answered.append(call_id)
                links.join(index, caller)
        if has_user:
            latest_user = index
        if made:
            links.mark(index)
        if answered or made:
            calls, answers = tuple(made), tuple(answered)
            shapes.append(MessageShape(has_system, has_user or opens, calls, answers, has_system))
        else:
            shapes.append(_BARE[has_system][has_user or opens])
    groups = links.groups()
    pinned = [index for index, shape in enumerate(shapes) if shape.pinned]
    if latest_user >= 0:
        pinned.append(latest_user)
    if messages:
        pinned.append(len(messages) - 1)
    # A pinned message's tool partners are pinned too: the same units are required, and what
    # the packer adds up as the pinned messages' tokens then holds the partners' as well.
    pinned_groups = {groups[index] for index in pinned} - {None}
    if pinned_groups:
        pinned.extend(index for index, group in enumerate(groups) if group in pinned_groups)
    for index in pinned:
        shapes[index] = shapes[index]._replace(pinned=True)
    anchor = _anchor(messages, shapes)
    if anchor is not None:
        shapes[anchor] = _PINNED_TURN  # a request answering no call: no group
    return shapes, groups


# A message making and answering no call, by whether it is pinned and whether it opens a turn.
_BARE = (
    (MessageShape(), MessageShape(opens_turn=True)),
    (
        MessageShape(pinned=True, system=True),
        MessageShape(pinned=True, opens_turn=True, system=True),
    ),
)
_PINNED_TURN = MessageShape(pinned=True, opens_turn=True)


def _anchor(messages: Sequence[ModelMessage], shapes: Sequence[MessageShape]) -> int | None:
    """The request to pin so that the pinned messages start on a request answering no call:
    None when they already do. The latest such request before them holding a user prompt,
    else the latest such request at all."""
    first = next((index for index, shape in enumerate(shapes) if shape.pinned), None)
    if first is None or _starts(messages[first], shapes[first]):
        return None
    fallback = None
    for index in range(first - 1, -1, -1):
        if _starts(messages[index], shapes[index]):
            if shapes[index].opens_turn:
                return index
            if fallback is None:
                fallback = index
    return fallback


def _starts(message: ModelMessage, shape: MessageShape) -> bool:
    return isinstance(message, ModelRequest) and not shape.answers
