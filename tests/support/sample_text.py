"""Generated text of the kinds planners hold, for the token-counting tests and benchmarks:
prose in several scripts, source code, log lines with numbers, and emoji sequences.

Deterministic for a seed (on one Python version: the code comes from the standard library's
own sources), with no data files and nothing downloaded.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
from collections.abc import Callable
from pathlib import Path

__all__ = ["EMOJI", "PROSE", "mixed_texts", "text_of_kind"]

# A sentence or two per script; prose is made by drawing words (characters, for scripts
# written without spaces) from these.
PROSE: dict[str, str] = {
    "english": "The quick brown fox jumps over the lazy dog while the planner splits its goal "
    "into smaller tasks, and each child inherits only what it needs; don't repeat yourself.",
    "german": "Falsches Üben von Xylophonmusik quält jeden größeren Zwerg, während die "
    "Straßenbahn über die Brücke fährt.",
    "french": "Voix ambiguë d'un cœur qui, au zéphyr, préfère les jattes de kiwis; l'été "
    "dernier, nous étions à Besançon.",
    "spanish": "El veloz murciélago hindú comía feliz cardillo y kiwi; la cigüeña tocaba el "
    "saxofón detrás del palenque de paja.",
    "russian": "Съешь же ещё этих мягких французских булок, да выпей чаю. Широкая электрификация "
    "южных губерний даст мощный толчок подъёму сельского хозяйства.",
    "greek": "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Τάχιστη αλώπηξ βαφής ψημένη γη, δρασκελίζει "
    "υπέρ νωθρού κυνός.",
    "arabic": "نص حكيم له سر قاطع وذو شأن عظيم مكتوب على ثوب أخضر ومغلف بجلد أزرق.",
    "hebrew": "דג סקרן שט בים מאוכזב ולפתע מצא חברה. עטלף אבק נס דרך מזגן שהתפוצץ כי חם.",
    "hindi": "ऋषियों को सताने वाले दुष्ट राक्षसों के राजा रावण का सर्वनाश करने वाले विष्णुवतार भगवान "
    "श्रीराम, अयोध्या के महाराज दशरथ के बड़े सपुत्र थे।",
    "chinese": "我能吞下玻璃而不伤身体。天地玄黄，宇宙洪荒。"  # noqa: RUF001 - the text's own commas
    "日月盈昃，辰宿列张。计划被拆分成子计划。",  # noqa: RUF001
    "japanese": "いろはにほへと ちりぬるを わかよたれそ つねならむ。私はガラスを食べられます。"
    "それは私を傷つけません。東京都渋谷区。",
    "korean": "다람쥐 헌 쳇바퀴에 타고파. 키스의 고유조건은 입술끼리 만나야 하고 특별한 기술은 "
    "필요치 않다.",
    "thai": "เป็นมนุษย์สุดประเสริฐเลิศคุณค่า กว่าบรรดาฝูงสัตว์เดรัจฉาน จงฝ่าฟันพัฒนาวิชาการ",
    "vietnamese": "Tiếng Việt có dấu: Một con chó lười biếng nằm ngủ dưới gốc cây đa đầu làng.",
}
_UNSPACED = {"chinese", "japanese", "thai"}

EMOJI = (
    "😀",
    "👍🏽",
    "👩‍👩‍👧‍👦",
    "🏳️‍🌈",
    "🇫🇷",
    "🇯🇵",
    "❤️",
    "🧑🏿‍💻",
    "1️⃣",
    "🫠",
    "👨‍❤️‍💋‍👨",
    "🏴󠁧󠁢󠁳󠁣󠁴󠁿",
)

# Sources of the standard library, read once: real code, identical on every machine that
# runs one Python version.
_CODE_SOURCES = (argparse, dataclasses, json.decoder, random)
_code_cache: list[str] = []


def _code() -> str:
    if not _code_cache:
        _code_cache.extend(
            Path(module.__file__).read_text(encoding="utf-8")  # type: ignore[arg-type]
            for module in _CODE_SOURCES
        )
    return "\n".join(_code_cache)


def _prose(rng: random.Random, size: int) -> str:
    language = rng.choice(sorted(PROSE))
    sentence = PROSE[language]
    if language in _UNSPACED:
        units, joiner = list(sentence), ""
    else:
        units, joiner = sentence.split(), " "
    parts: list[str] = []
    length = 0
    while length < size:
        part = rng.choice(units)
        parts.append(part)
        length += len(part) + len(joiner)
    return joiner.join(parts)


def _source(rng: random.Random, size: int) -> str:
    code = _code()
    start = rng.randrange(max(1, len(code) - size))
    return code[start : start + size]


def _log(rng: random.Random, size: int) -> str:
    lines: list[str] = []
    length = 0
    while length < size:
        record = {
            "ts": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.random() * 60:06.3f}Z",
            "level": rng.choice(["INFO", "WARN", "ERROR", "DEBUG"]),
            "latency_ms": round(rng.expovariate(0.01), 2),
            "id": rng.getrandbits(64),
            "path": f"/api/v{rng.randint(1, 3)}/items/{rng.randint(0, 10**6)}",
        }
        line = json.dumps(record)
        lines.append(line)
        length += len(line) + 1
    return "\n".join(lines)


def _emoji(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    length = 0
    while length < size:
        part = rng.choice(EMOJI) + rng.choice(["", " ", "", "!", " and "])
        parts.append(part)
        length += len(part)
    return "".join(parts)


_KINDS: dict[str, Callable[[random.Random, int], str]] = {
    "prose": _prose,
    "code": _source,
    "log": _log,
    "emoji": _emoji,
}
# How often each kind appears in mixed text.
_WEIGHTS = {"prose": 5, "code": 4, "log": 2, "emoji": 1}


def text_of_kind(kind: str, rng: random.Random, size: int) -> str:
    """About `size` characters of one kind: prose, code, log or emoji."""
    return _KINDS[kind](rng, size)


def mixed_texts(count: int, size: int = 1000, seed: int = 0) -> list[str]:
    """`count` texts of about `size` characters each (from half to one and a half times it),
    of every kind, drawn at random with a fixed seed."""
    rng = random.Random(seed)
    kinds = rng.choices(list(_WEIGHTS), weights=list(_WEIGHTS.values()), k=count)
    return [text_of_kind(kind, rng, rng.randint(size // 2, size * 3 // 2)) for kind in kinds]
