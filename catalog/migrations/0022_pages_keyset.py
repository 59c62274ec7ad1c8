"""Issue 24, console pages: placeholder (no schema change yet)."""

from __future__ import annotations

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("catalog", "0021_large_imports")]

    operations: list[migrations.operations.base.Operation] = []
