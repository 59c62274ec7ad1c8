"""Tool-RAG: embedding ragDescriptions, resolving a prompt to a snapshot, sibling collisions, and measuring
retrieval quality. See "How tools surface to the LLM" in the seeds, catalog/rag/README.md and TOOLS.md, "Tool-RAG".

- `domain/`: pure code (no Django): the embedded text and its hash, the retrieval index as plain values, ranking,
  assembling a snapshot and why-not, sibling pairs, recall/MRR, the retrieval case file;
- `embedders.py`: the `Embedder` interface, its implementations and the configured one;
- `selectors/`: reads: vectors needing work and embedding status, the in-process index, snapshot resolution,
  sibling pairs, stored evaluation runs;
- `services/`: writes: refreshing vectors (and queueing that after commit), sibling findings, evaluation runs;
- `api.py`, `views.py`, `urls.py`, `tasks.py`: the boundaries (HTTP API, pages, Celery tasks).
"""
