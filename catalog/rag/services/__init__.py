"""Tool-RAG writes: vectors, sibling findings and retrieval evaluation runs."""
