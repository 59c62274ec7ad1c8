"""Issue 24, resolve index: placeholder (no schema change yet)."""

from __future__ import annotations

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("catalog", "0022_pages_keyset")]

    operations: list[migrations.operations.base.Operation] = []
