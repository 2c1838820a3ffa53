"""What providers charge for cached prompt prefixes, and what a plan of requests costs.

Providers cache the leading tokens of a request: a later request that repeats them byte for
byte reads them at a fraction of the input price, and the request that first sends them may
pay extra to write them. A caller that renders fragments deterministically sends the same
bytes for the same fragment, so the cost of a plan of calls follows from the fragments each
call sends and their order.

Two fragments are the same when `fragment_id`, `token_count` and `content` are equal; their
relevance may differ (children score the parent's fragments their own way).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from . import _messages, _values
from ._messages import describe
from .types import ContextFragment, SkeletonResult

__all__ = ["CacheCost", "CachePricing", "estimate_cost"]

# dataclass(slots=True) needs Python 3.10; on 3.9 the classes work the same without slots.
_SLOTS: dict[str, bool] = {"slots": True} if sys.version_info >= (3, 10) else {}
_TTLS = ("5m", "1h")

FragmentKey = tuple[str, int, str]
"""What makes two fragments the same: `(fragment_id, token_count, content)`."""
_Requests = list[list[FragmentKey]]


def _real(name: str, value: object) -> float:
    # An int or float subclass is read as the plain value it holds, not by its `__float__`.
    number = _values.as_real(_values.plain_real(value))
    if number is None:
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not 0.0 <= number < math.inf:
        raise ValueError(f"{name} must be a finite number >= 0, got {describe(value)}")
    return number + 0.0  # -0.0 is the price 0.0


def _count(name: str, value: object) -> int:
    try:
        count = _values.as_int(value)
    except Exception as error:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}") from error
    if count is None:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if count < 0:
        raise ValueError(f"{name} must be >= 0, got {describe(value)}")
    return count


@dataclass(frozen=True, **_SLOTS)
class CachePricing:
    """What a token written to a provider's prompt cache and a token read from it cost, as
    multiples of an uncached input token, and the shortest prefix the provider caches.

    Fields:
        write: the price of a token written to the cache (1.25: a quarter more than plain
            input).
        read: the price of a token read from the cache (0.1: a tenth of plain input).
        min_prefix: the fewest tokens a cached prefix has; a shared prefix shorter than this
            is neither written nor read.

    Checked on construction: `write` and `read` must be finite real numbers >= 0 and
    `min_prefix` an int >= 0 (bool is neither); `TypeError` for a value of another type,
    `ValueError` for one out of range. The values are kept as a plain float and int.

    The presets (`anthropic`, `openai`, `gemini`) hold each provider's published figures as
    of 2026-12; a caller whose model is priced otherwise passes its own, for example
    `dataclasses.replace(CachePricing.anthropic(), min_prefix=4096)`.
    """

    write: float = 1.25
    read: float = 0.1
    min_prefix: int = 1024

    def __post_init__(self) -> None:
        write = _real("write", self.write)
        read = _real("read", self.read)
        min_prefix = _count("min_prefix", self.min_prefix)
        # Frozen: the checked, plain values replace what was passed.
        object.__setattr__(self, "write", write)
        object.__setattr__(self, "read", read)
        object.__setattr__(self, "min_prefix", min_prefix)

    @classmethod
    def anthropic(cls, ttl: str = "5m") -> CachePricing:
        """Anthropic's prompt caching, with cache breakpoints that live `ttl` ("5m" or "1h").

        Figures (Anthropic's prompt caching documentation and pricing page, taken 2026-12):
        a cache read costs 0.1x the base input price; a cache write 1.25x for the 5-minute
        lifetime and 2x for the 1-hour one. `min_prefix` is 1,024 tokens, the minimum
        cacheable prompt of the Sonnet models and of most Opus models; other models need
        other lengths (512 to 4,096 tokens: 2,048 or 4,096 for the Haiku models, 4,096 for
        Opus 4.5 and 4.6), for which pass your own `min_prefix`.

        Raises:
            TypeError: `ttl` is not a str.
            ValueError: `ttl` is neither "5m" nor "1h".
        """
        name = _values.plain_str(ttl)
        if name is None:
            raise TypeError(f"ttl must be a str, got {type(ttl).__name__}")
        if name not in _TTLS:
            raise ValueError(f"ttl must be one of {', '.join(_TTLS)}, got {describe(ttl)}")
        return cls(write=1.25 if name == "5m" else 2.0, read=0.1, min_prefix=1024)

    @classmethod
    def openai(cls) -> CachePricing:
        """OpenAI's prompt caching on the GPT-5.6 family and later models.

        Figures (OpenAI's prompt caching documentation and API pricing page, taken 2026-12): on the
        GPT-5.6 family and later, a cache write costs 1.25x the uncached input rate and a
        cached input token 0.1x (up to 90% off, the guide says); prompts are cached from
        1,024 tokens. Chosen as the newest models' prices because a plan priced today runs
        on them. Models before GPT-5.6 write at no extra charge and read at 0.1x to 0.5x by
        model: for those pass `CachePricing(write=1.0, read=...)` with the model's figure.
        """
        return cls(write=1.25, read=0.1, min_prefix=1024)

    @classmethod
    def gemini(cls) -> CachePricing:
        """Gemini's implicit caching, which the Gemini API applies to every request.

        Figures (Google's Gemini API context caching documentation and pricing page, taken
        2026-12): a cache hit is billed at up to 90% off the input price, taken here as
        0.1x; implicit caching charges nothing extra to write, so a write costs 1.0x, as
        plain input (explicit caches bill storage by the hour instead, which a per-token
        price cannot express).
        `min_prefix` is 4,096 tokens, the minimum input of the current Gemini 3 and later
        models, Flash and Pro alike; Gemini 2.5 Flash and Pro cache from 2,048 tokens,
        for which pass `min_prefix=2048`.
        """
        return cls(write=1.0, read=0.1, min_prefix=4096)


@dataclass(frozen=True, **_SLOTS)
class CacheCost:
    """What a plan of requests costs, summed over its requests, in uncached input tokens.

    Fields:
        billed: what the requests cost, each token priced as plain input, a cache read or a
            cache write.
        uncached: every request's tokens: what the requests cost with no cache.
        cached_tokens: the tokens read from the cache.
        written_tokens: the tokens written to the cache.

    `ratio` is `billed / uncached` (1.0 when there are no tokens). Checked on construction:
    the counts must be ints >= 0 with `cached_tokens + written_tokens <= uncached`, and
    `billed` a finite real number >= 0 (`TypeError` or `ValueError` naming the field).
    """

    billed: float
    uncached: int
    cached_tokens: int
    written_tokens: int

    def __post_init__(self) -> None:
        billed = _real("billed", self.billed)
        uncached = _count("uncached", self.uncached)
        cached = _count("cached_tokens", self.cached_tokens)
        written = _count("written_tokens", self.written_tokens)
        if cached + written > uncached:
            raise ValueError(
                "cached_tokens + written_tokens must not exceed uncached, got "
                f"{cached} + {written} > {uncached}"
            )
        object.__setattr__(self, "billed", billed)
        object.__setattr__(self, "uncached", uncached)
        object.__setattr__(self, "cached_tokens", cached)
        object.__setattr__(self, "written_tokens", written)

    @property
    def ratio(self) -> float:
        """`billed / uncached`: below 1.0 the cache saves, above it the writes cost more than
        the reads save; 1.0 when there are no tokens."""
        return self.billed / self.uncached if self.uncached else 1.0


_DEFAULT_PRICING = CachePricing()


def estimate_cost(
    requests: Iterable[Sequence[ContextFragment]], pricing: CachePricing = _DEFAULT_PRICING
) -> CacheCost:
    """What sending `requests` in this order costs with prompt caching, each request marking
    its cache breakpoints where they pay.

    Request j reads from the cache its longest shared prefix (the longest leading run of the
    same fragments, in tokens) with any earlier request, when that has at least
    `pricing.min_prefix` tokens (cached_j, else 0). It writes what a later request reads
    beyond that: w_j = max(0, L_j - cached_j), where L_j is its longest shared prefix with
    any later request, counted from `min_prefix` tokens in the same way. The rest is plain
    input: billed_j = read x cached_j + write x w_j + (tokens_j - cached_j - w_j).

    >>> fragment = ContextFragment("repo-map", 2000, 0.9)
    >>> estimate_cost([(fragment,)] * 4).ratio  # (1.25 + 3 x 0.1) / 4
    0.3875

    Args:
        requests: an iterable of requests, each a sequence of `ContextFragment` (a
            `SkeletonResult`'s `fragments`) in the order it is sent.
        pricing: the provider's cache prices; `CachePricing()` by default.

    Returns:
        The `CacheCost` summed over the requests. Time and memory are linear in the number
        of fragments over all requests.

    Raises:
        TypeError: `pricing` is not a `CachePricing`, `requests` is not an iterable or is a
            set (no order of its own), or a request is not a sequence of fragments (named
            as `requests[j]`).
        FragmentTypeError, FragmentValueError: a fragment is not a `ContextFragment` or has
            a `fragment_id` or `token_count` that `compress` would refuse (named as
            `requests[j][i]`).
        TypeError: a fragment's `content` is not a str.
        ValueError: the billed total is past the largest float (prices near it).
    Nothing is computed before every request is checked.
    """
    if not isinstance(pricing, CachePricing):
        raise TypeError(f"pricing must be a CachePricing, got {type(pricing).__name__}")
    billed, *counts = cost_fields(requests, pricing)
    if billed == math.inf:
        raise ValueError(
            f"the billed total is past the largest float at these prices ({pricing!r}); "
            "price in larger units"
        )
    return CacheCost(billed, *counts)


def cost_fields(
    requests: Iterable[Sequence[ContextFragment]], pricing: CachePricing
) -> tuple[float, int, int, int]:
    """`estimate_cost`'s fields, billed first, unchecked: a billed total past the largest
    float is `inf` here, where `CacheCost` refuses it."""
    return keyed_cost_fields(_keyed_requests(requests), pricing)


def keyed_cost_fields(
    keyed: Sequence[Sequence[FragmentKey]], pricing: CachePricing
) -> tuple[float, int, int, int]:
    """`cost_fields` of requests given as the keys of their fragments, already checked."""
    uncached = cached_total = written_total = 0
    floor = pricing.min_prefix
    for tokens, earlier, later in _shared_prefixes(keyed):
        cached = earlier if earlier >= floor else 0
        written = max(0, (later if later >= floor else 0) - cached)
        uncached += tokens
        cached_total += cached
        written_total += written
    plain = uncached - cached_total - written_total
    billed = pricing.read * cached_total + pricing.write * written_total + plain
    return billed, uncached, cached_total, written_total


def _fragment_key(
    fragment: ContextFragment,
    index: int,
    container: str,
    contents: dict[int, tuple[object, str]] | None = None,
) -> FragmentKey:
    """The fragment's `(fragment_id, token_count, content)`, equal for the same fragment,
    each field checked as `compress` checks it and read as the plain value it holds
    (`contents`: the plain strs made so far, by the id of the object each was made of, which
    the entry holds alive).

    Raises:
        FragmentTypeError, FragmentValueError: a bad field, named as `container[index]`.
        TypeError: `content` is not a str.
    """
    try:
        raw_id, raw_tokens, raw_content = (
            fragment.fragment_id,
            fragment.token_count,
            fragment.content,
        )
    except Exception as error:
        raise _messages.unreadable_error(index, None, "a field", error, container) from error
    if (
        type(raw_id) is str
        and raw_id
        and type(raw_tokens) is int
        and 0 <= raw_tokens <= _values.MAX_TOKEN_COUNT
        and type(raw_content) is str
    ):
        return raw_id, raw_tokens, raw_content
    fid = _values.fragment_id(raw_id, index, container)
    tokens = _values.token_count(raw_tokens, index, fid, container)
    made = None if contents is None else contents.get(id(raw_content))
    if made is not None:
        content: str | None = made[1]
    else:
        content = _values.plain_str(raw_content)
        if content is not None and contents is not None:
            contents[id(raw_content)] = (raw_content, content)
    if content is None:
        raise TypeError(
            f"{container}[{index}] (id {describe(fid)}): content must be a str, "
            f"got {type(raw_content).__name__}"
        )
    return fid, tokens, content


def _keyed_requests(requests: object) -> _Requests:
    # A set's order is not the order requests are sent in, which the cost depends on.
    unordered = (str, bytes, *_messages.UNORDERED)
    if isinstance(requests, unordered) or not isinstance(requests, Iterable):
        raise TypeError(
            "requests must be an iterable of sequences of ContextFragment, "
            f"got {_messages.form_name(requests)}"
        )
    keyed: _Requests = []
    # The plain str of each content that is a subclass (numpy's), made once per object: a
    # fragment in every request would otherwise copy its content (and hash the copy) each time.
    contents: dict[int, tuple[object, str]] = {}
    for position, request in enumerate(requests):
        container = f"requests[{position}]"
        if isinstance(request, (str, bytes, bytearray)) or not isinstance(request, Sequence):
            hint = " (pass its .fragments)" if isinstance(request, SkeletonResult) else ""
            raise TypeError(
                f"{container} must be a sequence of ContextFragment, "
                f"got {_messages.form_name(request)}{hint}"
            )
        keys: list[FragmentKey] = []
        for index, fragment in enumerate(request):
            if not isinstance(fragment, ContextFragment):
                raise _messages.fragment_error("not_fragment", index, None, fragment, container)
            keys.append(_fragment_key(fragment, index, container, contents))
        keyed.append(keys)
    return keyed


def _shared_prefixes(requests: Sequence[Sequence[FragmentKey]]) -> list[tuple[int, int, int]]:
    """For each request: its tokens, and the tokens of its longest shared prefix with any
    earlier request and with any later one.

    One trie over the requests' fragment keys, each node a prefix that the requests through
    it share: a node that exists before request j walks through it was made by an earlier
    request, and the last request through each node says whether a later one shares it.
    Linear in the fragments, where comparing every pair of requests is quadratic in them.
    """
    children: dict[tuple[int, FragmentKey], int] = {}
    prefix_tokens = [0]  # by node: the tokens of the prefix it stands for
    last_request = [-1]  # by node: the last request through it
    paths: list[list[int]] = []
    earlier: list[int] = []
    for position, keys in enumerate(requests):
        node, shared, path = 0, 0, []
        for key in keys:
            edge = (node, key)
            child = children.get(edge)
            if child is None:
                child = len(prefix_tokens)
                children[edge] = child
                prefix_tokens.append(prefix_tokens[node] + key[1])
                last_request.append(position)
            else:
                # Made by an earlier request: a node this request makes has no children yet.
                shared = prefix_tokens[child]
                last_request[child] = position
            node = child
            path.append(node)
        paths.append(path)
        earlier.append(shared)
    shares: list[tuple[int, int, int]] = []
    for position, path in enumerate(paths):
        later = 0
        # Deeper nodes are walked by fewer requests: the later ones stop sharing at one point.
        for node in path:
            if last_request[node] <= position:
                break
            later = prefix_tokens[node]
        shares.append((prefix_tokens[path[-1]] if path else 0, earlier[position], later))
    return shares
