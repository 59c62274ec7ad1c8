"""Issue 24, console pages: kept finding counts on Tool, indexes the catalog's sorts and search use."""

from __future__ import annotations

from typing import Any

from django.db import migrations, models
from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce


def _count_existing_findings(apps: Any, schema_editor: Any) -> None:
    Tool = apps.get_model("catalog", "Tool")
    Finding = apps.get_model("catalog", "Finding")

    def counted(**only: object) -> Coalesce:
        rows = Finding.objects.filter(tool=OuterRef("pk"), **only).order_by().values("tool").annotate(n=Count("pk"))
        return Coalesce(Subquery(rows.values("n"), output_field=IntegerField()), Value(0))

    Tool.objects.update(findings_count=counted(), error_count=counted(severity="error"))


class Migration(migrations.Migration):
    dependencies = [("catalog", "0018_finding_text_and_labels")]

    operations: list[migrations.operations.base.Operation] = [
        migrations.AddField(
            model_name="tool",
            name="findings_count",
            field=models.PositiveIntegerField(default=0, help_text="the tool's findings, kept current"),
        ),
        migrations.AddField(
            model_name="tool",
            name="error_count",
            field=models.PositiveIntegerField(default=0, help_text="the tool's error findings, kept current"),
        ),
        migrations.RunPython(_count_existing_findings, migrations.RunPython.noop, elidable=True),
    ]
