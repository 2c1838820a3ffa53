"""The image estimate the chat packers count: the providers' documented figures, the size read
from each format's header (as bytes, base64 and data URLs), and the option's checks."""

from __future__ import annotations

import base64

import pytest
from skeleton_compressor.integrations._media import (
    DEFAULT_MEDIA_TOKENS,
    _anthropic_tokens,
    _base64_reader,
    _bytes_reader,
    _openai_tokens,
    checked_media_tokens,
    image_size,
    image_tokens,
    source_tokens,
)
from support import images


@pytest.mark.parametrize(
    ("width", "height", "tokens"),
    [
        # The worked examples of OpenAI's guide (detail "high").
        (1024, 1024, 765),
        (2048, 4096, 1105),
        # Fits 768 on its short side already: 2 x 4 tiles.
        (768, 2048, 1445),
        (512, 512, 255),
        (513, 512, 425),
    ],
)
def test_openai_high_detail(width: int, height: int, tokens: int) -> None:
    assert _openai_tokens(width, height) == tokens


@pytest.mark.parametrize(
    ("width", "height", "tokens"),
    [
        # Anthropic's table: about width * height / 750.
        (200, 200, 54),
        (1000, 1000, 1334),
        (1092, 1092, 1590),
        # Scaled down to 1,568 on the long edge, then held to about 1,600 tokens.
        (3136, 100, 105),
        (4000, 3000, 1600),
    ],
)
def test_anthropic(width: int, height: int, tokens: int) -> None:
    assert _anthropic_tokens(width, height) == tokens


def test_an_image_counts_the_larger_figure_and_never_more_than_the_default() -> None:
    for width in (1, 7, 100, 511, 512, 513, 768, 1000, 1568, 2048, 3000, 10_000, 100_000):
        for height in (1, 50, 512, 769, 1092, 2000, 4096, 65_535):
            both = (_openai_tokens(width, height), _anthropic_tokens(width, height))
            assert image_tokens(width, height) == max(both)
            assert image_tokens(width, height) == image_tokens(height, width)
            assert 0 < image_tokens(width, height) <= DEFAULT_MEDIA_TOKENS
    assert DEFAULT_MEDIA_TOKENS == image_tokens(4000, 3000) == 1600


BUILT = [
    ("png", images.png(800, 600), (800, 600)),
    ("jpeg", images.jpeg(1000, 700), (1000, 700)),
    # EXIF data of 140 kB before the frame header, over three segments.
    ("jpeg, exif", images.jpeg(1000, 700, exif=140_000, progressive=True), (1000, 700)),
    ("gif", images.gif(320, 200), (320, 200)),
    ("webp lossy", images.webp_lossy(640, 480), (640, 480)),
    ("webp lossless", images.webp_lossless(640, 16_384), (640, 16_384)),
    ("webp extended", images.webp_extended(3000, 2000), (3000, 2000)),
]


@pytest.mark.parametrize(
    ("data", "size"), [(data, size) for _, data, size in BUILT], ids=[name for name, _, _ in BUILT]
)
def test_the_size_is_read_from_each_format(data: bytes, size: tuple[int, int]) -> None:
    encoded = base64.b64encode(data).decode()
    assert image_size(_bytes_reader(data)) == size
    assert image_size(_base64_reader(encoded, 0)) == size
    # MIME's line breaks, URL-safe letters without padding, inside a data URL.
    assert image_size(_base64_reader(base64.encodebytes(data).decode(), 0)) == size
    urlsafe = base64.urlsafe_b64encode(data).decode().rstrip("=")
    assert image_size(_base64_reader(urlsafe, 0)) == size
    for source in (data, bytearray(data), memoryview(data), encoded, images.data_url(data)):
        assert source_tokens(source, 7) == image_tokens(*size)


def test_a_base64_payload_is_decoded_only_where_the_header_is() -> None:
    data = images.jpeg(1000, 700, exif=140_000)
    encoded = base64.b64encode(data).decode()
    read = _base64_reader(encoded, 0)
    decoded: list[int] = []

    def counting(start: int, stop: int) -> bytes:
        decoded.append(stop - start)
        return read(start, stop)

    assert image_size(counting) == (1000, 700)
    assert sum(decoded) < 100
    for start, stop in ((0, 1), (1, 5), (7, 8), (len(data) - 3, len(data) + 10), (5, 5)):
        assert read(start, stop) == data[start:stop]


@pytest.mark.parametrize(
    "source",
    [
        "https://example.com/cat.png",
        "gs://bucket/cat.png",
        "data:image/svg+xml,%3Csvg%3E%3C/svg%3E",
        "data:image/png;base64,not base64 at all!",
        "file-abc123",
        "",
        b"",
        b"BM\x36\x00\x00\x00",  # a BMP: a format whose size is not read
        images.png(0, 10),
        images.png(800, 600)[:20],
        images.jpeg(1000, 700)[:30],
        images.webp_lossy(640, 480)[:28],
        None,
        12,
    ],
)
def test_a_size_not_known_counts_the_default(source: object) -> None:
    assert source_tokens(source, 7) == 7


def test_media_tokens_is_an_int_at_least_zero() -> None:
    class Count(int):
        pass

    assert checked_media_tokens(0) == 0
    assert checked_media_tokens(Count(5)) == 5
    assert type(checked_media_tokens(Count(5))) is int
    for value, error, message in (
        (-1, ValueError, "media_tokens must be >= 0, got -1"),
        (1.5, TypeError, "media_tokens must be an int, got 1.5 (float)"),
        ("100", TypeError, "media_tokens must be an int, got '100' (str)"),
        (True, TypeError, "media_tokens must be an int, got True (bool)"),
        (None, TypeError, "media_tokens must be an int, got None (NoneType)"),
    ):
        with pytest.raises(error) as raised:
            checked_media_tokens(value)
        assert str(raised.value) == message
