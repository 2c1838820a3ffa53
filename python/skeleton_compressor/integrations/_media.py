"""What an image or another non-text part of a chat message costs in tokens, for the chat
packers' default counting: a model is sent it, so it counts, never 0.

An image whose size its bytes give (the PNG, JPEG, GIF and WebP headers, read here without
any imaging library, and without decoding more of a base64 payload than the header) counts
as the larger of two providers' documented figures, so that a history packed for either
fits it:

- OpenAI, `detail: "high"` (https://platform.openai.com/docs/guides/images-vision,
  "Calculating costs"): the image is scaled to fit within 2048 x 2048, then so that its
  shortest side is 768 px, and costs 85 tokens plus 170 for each 512 px tile covering it.
  Only scaling down is applied here: the guide's examples only scale down, and its stated
  high-detail size is 768 px on the short side at most. At most 1,445 tokens (8 tiles).
- Anthropic (https://docs.anthropic.com/en/docs/build-with-claude/vision, "Evaluate image
  size" and "Calculate image costs"): about width * height / 750 tokens, an image being
  scaled down first until its long edge is at most 1,568 px and it is at most about 1,600
  tokens (about 1.15 megapixels). At most 1,600 tokens here.

Models counting otherwise can count more: OpenAI's patch-based models (a token a 32 px
patch, at most 1,536 an image) count a long, thin image (say 259 x 5,463) at up to twice
this figure. A user of those counts whole messages with a callable token counter.

Anything else, whose size is not known here (an image given by URL or by a provider's file
id, data that is not one of those formats, audio, video, documents and other files), counts
as `DEFAULT_MEDIA_TOKENS` or the figure a packer's `media_tokens=` sets: the default is the
largest an image of known size can count, so that an image given by URL never counts less
than it would inline. Audio, video and long documents can cost far more (a PDF page is
billed as text and an image); a user sending them sets `media_tokens=` to what they cost,
or counts whole messages with a callable token counter.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from fractions import Fraction

from .. import _messages, _values

__all__ = [
    "DEFAULT_MEDIA_TOKENS",
    "checked_media_tokens",
    "image_size",
    "image_tokens",
    "source_tokens",
]

DEFAULT_MEDIA_TOKENS = 1_600
"""The tokens a part counts when its size is not known: the most an image of known size
counts (Anthropic's cap, about 1,600 tokens)."""

_Read = Callable[[int, int], bytes]

# OpenAI, detail "high".
_OPENAI_BOX = 2048
_OPENAI_SHORT_SIDE = 768
_OPENAI_TILE = 512
_OPENAI_BASE = 85
_OPENAI_PER_TILE = 170
# Anthropic.
_ANTHROPIC_LONG_EDGE = 1568
_ANTHROPIC_PIXELS_PER_TOKEN = 750
_ANTHROPIC_MOST = 1_600


def checked_media_tokens(value: object) -> int:
    """`media_tokens` as a plain int >= 0; a TypeError or ValueError naming it otherwise."""
    try:
        tokens = _values.as_int(value)
    except Exception:
        tokens = None
    if tokens is None:
        raise TypeError(f"media_tokens must be an int, got {_messages._typed(value)}")
    if tokens < 0:
        raise ValueError(f"media_tokens must be >= 0, got {tokens}")
    return tokens


def image_tokens(width: int, height: int) -> int:
    """The tokens an image of `width` x `height` pixels counts: the larger of OpenAI's
    high-detail figure and Anthropic's (see the module)."""
    return max(_openai_tokens(width, height), _anthropic_tokens(width, height))


def _openai_tokens(width: int, height: int) -> int:
    # Exact fractions: a side scaled to a whole number of tiles must not gain one from float
    # noise, and a tile partly covered counts whole, as the guide counts it.
    scale = Fraction(1)
    longest, shortest = max(width, height), min(width, height)
    if longest > _OPENAI_BOX:
        scale = Fraction(_OPENAI_BOX, longest)
    if shortest * scale > _OPENAI_SHORT_SIDE:
        scale = Fraction(_OPENAI_SHORT_SIDE, shortest)
    across = -(-width * scale // _OPENAI_TILE)
    down = -(-height * scale // _OPENAI_TILE)
    return _OPENAI_BASE + _OPENAI_PER_TILE * int(across * down)


def _anthropic_tokens(width: int, height: int) -> int:
    area = Fraction(width * height)
    longest = max(width, height)
    if longest > _ANTHROPIC_LONG_EDGE:
        area *= Fraction(_ANTHROPIC_LONG_EDGE, longest) ** 2
    return min(int(-(-area // _ANTHROPIC_PIXELS_PER_TOKEN)), _ANTHROPIC_MOST)


def source_tokens(source: object, default: int) -> int:
    """The tokens an image counts given its `source`: its bytes, its base64 text, or a URL
    (a `data:` URL is read; any other URL, or a size not found, counts `default`)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        size = image_size(_bytes_reader(bytes(source)))
    elif isinstance(source, str):
        size = _text_size(source)
    else:
        size = None
    return default if size is None else image_tokens(*size)


def _text_size(text: str) -> tuple[int, int] | None:
    if text[:5].lower() == "data:":
        # data:[<media type>][;base64],<data>; only a base64 payload is an image's bytes here.
        comma = text.find(",", 5, 512)
        if comma < 0 or not text[5:comma].lower().endswith(";base64"):
            return None
        return image_size(_base64_reader(text, comma + 1))
    if "://" in text[:16]:
        return None  # fetched by the provider: not read here
    return image_size(_base64_reader(text, 0))


def _bytes_reader(data: bytes) -> _Read:
    return lambda start, stop: data[start:stop]


_URL_SAFE = str.maketrans("-_", "+/")


def _base64_reader(text: str, start: int) -> _Read:
    """Reads the bytes a base64 payload (from `text[start]`) decodes to, decoding only the
    characters that hold them: a header needs a few dozen bytes of a payload of megabytes."""
    if any(space in text for space in " \n\r\t"):
        # Line breaks (MIME's every 76 characters) shift the groups of four: removed first.
        text = "".join(text[start:].split())
        start = 0
    if text.find("-", start) >= 0 or text.find("_", start) >= 0:
        text = text.translate(_URL_SAFE)

    def read(first: int, stop: int) -> bytes:
        if stop <= first:
            return b""
        group = first // 3
        chunk = text[start + group * 4 : start + -(-stop // 3) * 4]
        if chunk.endswith("="):
            chunk = chunk.rstrip("=")
        chunk += "=" * (-len(chunk) % 4)
        try:
            decoded = base64.b64decode(chunk, validate=True)
        except (binascii.Error, ValueError):
            return b""  # not base64: no size, so the default
        offset = first - group * 3
        return decoded[offset : offset + stop - first]

    return read


def image_size(read: _Read) -> tuple[int, int] | None:
    """(width, height) from a PNG, JPEG, GIF or WebP header, `read(start, stop)` giving the
    bytes in [start, stop) (fewer at the end); None for another format, a damaged header or
    a side of 0."""
    head = read(0, 30)
    size: tuple[int, int] | None = None
    if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR" and len(head) >= 24:
        size = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    elif head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        size = _little(head, 6, 2), _little(head, 8, 2)
    elif head.startswith(b"\xff\xd8\xff"):
        size = _jpeg_size(read)
    elif head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        size = _webp_size(head)
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return size


def _little(data: bytes, at: int, width: int) -> int:
    return int.from_bytes(data[at : at + width], "little")


# Start-of-frame markers (baseline, progressive, lossless, arithmetic); C4, C8 and CC, in
# the same range, are other segments.
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# Markers without a length: TEM and the restart markers.
_JPEG_BARE = frozenset({0x01, *range(0xD0, 0xD8)})
_JPEG_MOST_SEGMENTS = 1_000


def _jpeg_size(read: _Read) -> tuple[int, int] | None:
    """The frame header's size, found by stepping over the segments before it (EXIF data and
    colour profiles can run to hundreds of kilobytes, read here only at their lengths)."""
    position = 2
    for _ in range(_JPEG_MOST_SEGMENTS):
        head = read(position, position + 4)
        if len(head) < 2 or head[0] != 0xFF:
            return None
        marker = head[1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker in _JPEG_BARE:
            position += 2
            continue
        if marker in (0xD8, 0xD9, 0xDA) or len(head) < 4:
            return None  # the image data, or its end, before any frame header
        length = int.from_bytes(head[2:4], "big")
        if marker in _JPEG_FRAMES:
            frame = read(position + 5, position + 9)
            if len(frame) < 4:
                return None
            return int.from_bytes(frame[2:4], "big"), int.from_bytes(frame[0:2], "big")
        if length < 2:
            return None
        position += 2 + length
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    if len(head) < 30:
        return None
    chunk = head[12:16]
    if chunk == b"VP8X":  # extended: the canvas size, each less one, in 24 bits
        return _little(head, 24, 3) + 1, _little(head, 27, 3) + 1
    if chunk == b"VP8L":  # lossless: a signature byte, then 14 bits a side, each less one
        if head[20] != 0x2F:
            return None
        bits = _little(head, 21, 4)
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":  # lossy: a key frame's start code, then 14 bits a side
        if head[23:26] != b"\x9d\x01\x2a":
            return None
        return _little(head, 26, 2) & 0x3FFF, _little(head, 28, 2) & 0x3FFF
    return None
