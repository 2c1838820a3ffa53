"""LangChain (langchain-core 1.x): a document compressor for retrievers, and a chat-history
packer that never breaks a tool call. Importing this module imports langchain-core
(`pip install 'skeleton-compressor[langchain]'`)."""

from __future__ import annotations

from ._framework import missing_framework

try:
    from ._langchain_documents import SkeletonDocumentCompressor
    from ._langchain_messages import (
        DEFAULT_MEDIA_TOKENS,
        MESSAGE_OVERHEAD,
        PackedMessages,
        pack_messages,
    )
except ModuleNotFoundError as error:
    raise missing_framework(error, "langchain_core", "langchain", (3, 10)) from error

__all__ = [
    "DEFAULT_MEDIA_TOKENS",
    "MESSAGE_OVERHEAD",
    "PackedMessages",
    "SkeletonDocumentCompressor",
    "pack_messages",
]
