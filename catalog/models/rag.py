"""Stored embeddings: one vector per tool per embedder model, with the hash of the text it came from."""

from __future__ import annotations

import numpy as np
from django.db import models
from django.utils import timezone

from .catalog import Tool


class ToolEmbedding(models.Model):
    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="embeddings")
    model_id = models.CharField(max_length=200)
    text_sha256 = models.CharField(max_length=64, help_text="SHA-256 of the embedded text (see catalog.rag.text)")
    dim = models.PositiveIntegerField()
    vector = models.BinaryField(help_text="float32, little-endian, unit length")
    embedded_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            # One vector per tool and model: a redelivered or racing task updates, never duplicates.
            models.UniqueConstraint(fields=["tool", "model_id"], name="tool_embedding_unique"),
        ]
        indexes = [models.Index(fields=["model_id", "text_sha256"], name="tool_embedding_text_idx")]

    def __str__(self) -> str:
        return f"{self.tool_id} @ {self.model_id}"

    def as_array(self) -> np.ndarray:
        return np.frombuffer(bytes(self.vector), dtype="<f4")
