"""Adapters that put the packer where frameworks plug one in.

Each is a module of its own that imports its framework only when imported, installed with an
extra: `skeleton_compressor.integrations.langchain` (`skeleton-compressor[langchain]`),
`.llamaindex` (`[llamaindex]`), `.haystack` (`[haystack]`) and `.pydantic_ai`
(`[pydantic-ai]`). Every adapter takes `skeleton_budget`, `token_counter` and the library's
strategy and policy keywords.
"""

__all__: list[str] = []
