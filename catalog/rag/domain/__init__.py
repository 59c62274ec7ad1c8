"""Tool-RAG's pure code: plain functions over plain values and numpy arrays, no Django."""
