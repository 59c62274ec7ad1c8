"""Tool-RAG reads: what the stored vectors say, and snapshot resolution over them."""
