"""Issue 24, embedding worker writes: placeholder (no schema change yet)."""

from __future__ import annotations

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("catalog", "0023_resolve_index_in_place")]

    operations: list[migrations.operations.base.Operation] = []
