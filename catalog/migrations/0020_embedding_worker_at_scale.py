"""Issue 24, the worker path: what the debounced, incremental sibling refresh keeps."""

from __future__ import annotations

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("catalog", "0019_console_pages_at_scale")]

    operations: list[migrations.operations.base.Operation] = []
