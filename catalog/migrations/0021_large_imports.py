"""Issue 24, imports: the status of a long import answered at once."""

from __future__ import annotations

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("catalog", "0020_embedding_worker_at_scale")]

    operations: list[migrations.operations.base.Operation] = []
