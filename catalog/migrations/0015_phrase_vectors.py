"""Phrase vectors beside each tool vector (hybrid retrieval), indexes for the newest-vector check every resolution
makes, and per-signal figures of each evaluation.

Existing vectors keep serving the whole-text signal; `phrase_scheme` 0 marks them as made before phrases, so the
sweep re-embeds them (with their phrases) within a minute of the upgrade.
"""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("catalog", "0014_audit_anchor")]

    operations = [
        migrations.AddField(
            model_name="toolembedding",
            name="phrases",
            field=models.BinaryField(default=b"", help_text="float32 rows, little-endian, unit length"),
        ),
        migrations.AddField(
            model_name="toolembedding",
            name="phrase_scheme",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.AddIndex(
            model_name="toolembedding",
            index=models.Index(fields=["model_id", "embedded_at"], name="tool_embedding_time_idx"),
        ),
        migrations.AddIndex(
            model_name="toolembedding",
            index=models.Index(fields=["model_id", "id"], name="tool_embedding_newest_idx"),
        ),
        migrations.AddField(
            model_name="retrievalevaluation",
            name="figures",
            field=models.JSONField(default=dict),
        ),
    ]
