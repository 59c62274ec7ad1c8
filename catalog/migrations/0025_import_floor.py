"""Issue 24, imports at their floor: placeholder (no schema change yet)."""

from __future__ import annotations

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("catalog", "0024_worker_writes")]

    operations: list[migrations.operations.base.Operation] = []
