"""Issue 24, the worker path: what the debounced, incremental sibling refresh keeps.

`ToolEmbedding.siblings_checked` marks the vectors the sibling findings account for. The vectors stored before
this migration were all accounted for by the full refresh that ran after their system's last batch, so they start
checked (added with default true, then the default for new rows becomes false); the partial index finds the few
unchecked ones after a change without reading every vector row.
"""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("catalog", "0019_console_pages_at_scale")]

    operations = [
        migrations.AddField(
            model_name="toolembedding",
            name="siblings_checked",
            field=models.BooleanField(default=True),
        ),
        migrations.AlterField(
            model_name="toolembedding",
            name="siblings_checked",
            field=models.BooleanField(default=False),
        ),
        migrations.AddIndex(
            model_name="toolembedding",
            index=models.Index(
                condition=models.Q(("siblings_checked", False)),
                fields=["model_id", "tool"],
                name="tool_embedding_unchecked_idx",
            ),
        ),
    ]
