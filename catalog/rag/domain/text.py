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


def cut_text(text: str, max_chars: int) -> str:
    """`text` if it is at most `max_chars` long; else its first `max_chars` characters, ending at the last
    whitespace of the final tenth when there is one (a cut word is a token the model would misread)."""
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    space = max(head.rfind(" "), head.rfind("\n"))
    return head[:space] if space >= max_chars * 0.9 else head
