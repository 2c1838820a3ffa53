"""Image files built byte by byte, as their formats lay them out, for the tests of the chat
packers' image estimate: a whole PNG (which any decoder opens), and the headers of JPEG, GIF
and WebP files (what a reader of their size looks at) followed by filler."""

from __future__ import annotations

import base64
import struct
import zlib


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, *, note: int = 0) -> bytes:
    """A whole 1-bit greyscale PNG of `width` x `height`, all black, with a text chunk of
    `note` bytes before the image data (a file of about `note` bytes more)."""
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    row = b"\x00" * (1 + (width + 7) // 8)
    chunks = [_png_chunk(b"IHDR", header)]
    if note:
        chunks.append(_png_chunk(b"tEXt", b"Comment\x00" + b"x" * note))
    chunks.append(_png_chunk(b"IDAT", zlib.compress(row * height)))
    chunks.append(_png_chunk(b"IEND", b""))
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)


def jpeg(width: int, height: int, *, exif: int = 0, progressive: bool = False) -> bytes:
    """A JPEG's segments up to its scan: JFIF, an EXIF segment of `exif` bytes (which a
    reader steps over), a quantisation table, the frame header holding the size."""
    segments = [b"\xff\xd8"]

    def segment(marker: int, data: bytes) -> None:
        segments.append(bytes((0xFF, marker)) + struct.pack(">H", len(data) + 2) + data)

    segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    while exif > 0:
        size = min(exif, 65_000)
        segment(0xE1, b"Exif\x00\x00" + b"\x00" * size)
        exif -= size
    segment(0xDB, b"\x00" + bytes(range(1, 65)))
    frame = struct.pack(">BHHB", 8, height, width, 3) + b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    segment(0xC2 if progressive else 0xC0, frame)
    segment(0xDA, b"\x03\x01\x00\x02\x11\x03\x11\x00\x3f\x00")
    return b"".join(segments) + b"\x00" * 64 + b"\xff\xd9"


def gif(width: int, height: int) -> bytes:
    """A GIF89a's header and logical screen, then its trailer."""
    return b"GIF89a" + struct.pack("<HHBBB", width, height, 0, 0, 0) + b"\x3b"


def _riff(chunk: bytes, payload: bytes) -> bytes:
    body = b"WEBP" + chunk + struct.pack("<I", len(payload)) + payload
    return b"RIFF" + struct.pack("<I", len(body)) + body


def webp_lossy(width: int, height: int) -> bytes:
    """A lossy WebP (VP8): a key frame's tag, start code and 14-bit sides."""
    frame = b"\x10\x02\x00" + b"\x9d\x01\x2a" + struct.pack("<HH", width, height)
    return _riff(b"VP8 ", frame + b"\x00" * 16)


def webp_lossless(width: int, height: int) -> bytes:
    """A lossless WebP (VP8L): its signature, then the sides less one in 14 bits each."""
    bits = (width - 1) | ((height - 1) << 14)
    return _riff(b"VP8L", b"\x2f" + struct.pack("<I", bits) + b"\x00" * 16)


def webp_extended(width: int, height: int) -> bytes:
    """An extended WebP (VP8X): flags, then the canvas's sides less one in 24 bits each."""
    sides = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return _riff(b"VP8X", b"\x10\x00\x00\x00" + sides + b"\x00" * 16)


def data_url(data: bytes, media_type: str = "image/png") -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
