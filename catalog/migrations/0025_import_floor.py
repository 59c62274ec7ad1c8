"""Issue 24, imports at their floor: the revision records which rules' code made the stored findings, so the next
import re-lints only the tools it changed when that code is unchanged (catalog.domain.rules.scope)."""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("catalog", "0024_worker_writes")]

    operations: list[migrations.operations.base.Operation] = [
        migrations.AddField(
            model_name="catalogrevision",
            name="lint_fingerprint",
            field=models.CharField(
                blank=True,
                default="",
                help_text="the rules' code that made the stored findings (catalog.domain.rules.scope): an import "
                "keeps an unchanged tool's findings only under the same code",
                max_length=64,
            ),
        ),
    ]
