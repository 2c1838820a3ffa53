"""What the cells and option lists of the scenarios' steps mean in Python."""

from __future__ import annotations

from typing import Any

from skeleton_compressor import ContextFragment

__all__ = ["cell_value", "fragments_of", "options_of"]

# Step arguments are strings; these cells mean Python values.
_CELLS: dict[str, Any] = {"yes": True, "no": False, "": None, '""': "", "true": True}


def cell_value(cell: str) -> Any:
    if cell in _CELLS:
        return _CELLS[cell]
    for kind in (int, float):
        try:
            return kind(cell)
        except ValueError:
            pass
    return cell


def options_of(text: str) -> dict[str, Any]:
    """`min_relevance=0.5, on_overflow=raise` as keyword arguments."""
    pairs = (item.strip().split("=", 1) for item in text.split(",") if item.strip())
    return {name: cell_value(value) for name, value in pairs}


def fragments_of(datatable: list[list[str]]) -> tuple[ContextFragment, ...]:
    """A table with columns id, tokens, relevance, and optionally required, group and variant
    (the variant_of). Those three are set as the cells say, unchecked, so that scenarios can
    give bad values."""
    header, *rows = datatable
    fragments = []
    for row in rows:
        cells = dict(zip(header, row))
        fragment = ContextFragment(cells["id"], int(cells["tokens"]), float(cells["relevance"]))
        if cells.get("required"):
            object.__setattr__(fragment, "required", cell_value(cells["required"]))
        if cells.get("group"):
            object.__setattr__(fragment, "group", cell_value(cells["group"]))
        if cells.get("variant"):
            object.__setattr__(fragment, "variant_of", cell_value(cells["variant"]))
        fragments.append(fragment)
    return tuple(fragments)
