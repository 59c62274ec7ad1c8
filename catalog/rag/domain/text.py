"""What gets embedded for a tool: its ragDescription plus its ragKeywords in every language."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence


def embedding_text(rag_description: str, rag_keywords: Mapping[str, Sequence[str]] | None) -> str:
    """Description first, then one line of keywords per language (sorted by language code, so the text and
    its hash do not depend on the manifest's key order)."""
    lines = [rag_description.strip()]
    for lang in sorted(rag_keywords or {}):
        words = [w.strip() for w in (rag_keywords or {})[lang] if w and w.strip()]
        if words:
            lines.append(", ".join(words))
    return "\n".join(line for line in lines if line)


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def rag_text_hash(rag_description: str, rag_keywords: Mapping[str, Sequence[str]] | None) -> str:
    """The hash stored on a tool; "" for a tool with nothing to embed (it is never a retrieval candidate)."""
    text = embedding_text(rag_description, rag_keywords)
    return text_sha256(text) if text else ""
