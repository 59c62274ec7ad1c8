"""Stored embeddings: per tool and embedder model, the vector of its newest text and, while a rewrite awaits
sign-off, of the text in effect; each with the hash of the text it came from."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from catalog.models.catalog import Tool


class ToolEmbedding(models.Model):
    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="embeddings")
    model_id = models.CharField(max_length=200)
    text_sha256 = models.CharField(max_length=64, help_text="SHA-256 of the embedded text (see catalog.rag.text)")
    dim = models.PositiveIntegerField()
    vector = models.BinaryField(help_text="float32, little-endian, unit length")
    # The vectors of the text's phrases (catalog.rag.domain.phrases: positives, then negatives), each `dim`
    # float32 values, one after the other; `phrase_scheme` says how the phrases were cut (0: made before phrases).
    phrases = models.BinaryField(default=b"", help_text="float32 rows, little-endian, unit length")
    phrase_scheme = models.PositiveSmallIntegerField(default=0)
    embedded_at = models.DateTimeField(default=timezone.now)
    # Whether the sibling findings account for this vector (catalog.rag.services.siblings): false when it is new
    # or re-made, or when a sibling it collided with changed; the refresh after a change scores only these.
    siblings_checked = models.BooleanField(default=False)

    class Meta:
        constraints = [
            # One vector per tool, model and text: a redelivered or racing task updates, never duplicates. A tool
            # keeps two while a rewrite of its text awaits sign-off (clinical profiles still retrieve by the text
            # in effect); any other is deleted once its replacement is stored.
            models.UniqueConstraint(fields=["tool", "model_id", "text_sha256"], name="tool_embedding_unique"),
        ]
        indexes = [
            models.Index(fields=["model_id", "text_sha256"], name="tool_embedding_text_idx"),
            # Every resolution asks for the newest vector of the model (`rag.selectors.vectors.vectors_version`):
            # with these the answer is two index lookups, not a scan of every vector row (16 KB each with phrases).
            models.Index(fields=["model_id", "embedded_at"], name="tool_embedding_time_idx"),
            models.Index(fields=["model_id", "id"], name="tool_embedding_newest_idx"),
            # The few vectors a sibling refresh (and the sweep looking for a lost one) has to check.
            models.Index(
                fields=["model_id", "tool"],
                condition=models.Q(siblings_checked=False),
                name="tool_embedding_unchecked_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tool_id} @ {self.model_id}"


class RetrievalEvaluation(models.Model):
    """One run of the retrieval case set against the catalog as it was (revisions and model recorded)."""

    created_at = models.DateTimeField(default=timezone.now)
    run_by = models.CharField(max_length=200, help_text="user:NAME, cli …")
    model_id = models.CharField(max_length=200)
    revisions = models.JSONField(default=dict, help_text='{"condor": 3, "tucan": 1}: the revision of each system')
    cases_file = models.CharField(max_length=300)
    cases = models.PositiveIntegerField()
    recall_at_1 = models.FloatField()
    recall_at_5 = models.FloatField()
    recall_at_10 = models.FloatField()
    mrr = models.FloatField()
    in_snapshot = models.FloatField(help_text="share of cases whose expected tools all reached the candidate set")
    by_language = models.JSONField(default=dict)
    # Recall and MRR per signal (fused, whole, phrase, lexical), case split (all, tune, held-back) and language
    # (all, en, de): {"fused": {"held-back": {"de": {"cases": 40, "recall_at_1": …}}}}.
    figures = models.JSONField(default=dict)
    failures = models.JSONField(default=list)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"retrieval eval {self.created_at:%Y-%m-%d %H:%M} ({self.model_id})"
