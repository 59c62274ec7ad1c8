"""Tool-RAG: embedding ragDescriptions, resolving a prompt to a candidate snapshot, sibling collisions,
and measuring retrieval quality. See "How tools surface to the LLM" in the seeds and TOOLS.md."""
