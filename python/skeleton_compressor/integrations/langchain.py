"""LangChain (langchain-core 1.x): a document compressor for retrievers, and a chat-history
packer that never breaks a tool call. Importing this module imports langchain-core
(`pip install 'skeleton-compressor[langchain]'`)."""

from __future__ import annotations

from ._langchain_documents import SkeletonDocumentCompressor
from ._langchain_messages import MESSAGE_OVERHEAD, PackedMessages, pack_messages

__all__ = ["MESSAGE_OVERHEAD", "PackedMessages", "SkeletonDocumentCompressor", "pack_messages"]
