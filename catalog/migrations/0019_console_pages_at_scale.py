"""Issue 24, console pages: kept finding counts on Tool, indexes the catalog's sorts and search use."""

from __future__ import annotations

from typing import Any

from django.contrib.postgres.indexes import GinIndex, OpClass
from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations, models
from django.db.models import Count, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Cast, Coalesce, Concat, Upper


def _count_existing_findings(apps: Any, schema_editor: Any) -> None:
    Tool = apps.get_model("catalog", "Tool")
    Finding = apps.get_model("catalog", "Finding")

    def counted(**only: object) -> Coalesce:
        rows = Finding.objects.filter(tool=OuterRef("pk"), **only).order_by().values("tool").annotate(n=Count("pk"))
        return Coalesce(Subquery(rows.values("n"), output_field=IntegerField()), Value(0))

    Tool.objects.update(findings_count=counted(), error_count=counted(severity="error"))


class AddIndexOnPostgres(migrations.AddIndex):
    """An index only PostgreSQL has (GIN with a trigram operator class): in the state everywhere, created on
    PostgreSQL only (SQLite's search scans; its catalogs are small)."""

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)


class TrigramExtensionOnPostgres(TrigramExtension):
    """pg_trgm on PostgreSQL; nothing elsewhere, backwards too (Django's own asks pg_extension on any backend when
    a migration is unapplied, and SQLite has no such table)."""

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)


LIVE = Q(retired_in__isnull=True)
# The browser's sort keys with an index each (catalog.models.catalog.SORTED_BY), as this migration made them.
SORTED_BY = {
    "id": (),
    "plane": ("plane",),
    "module": ("module",),
    "availability": ("availability",),
    "policy": ("effective_policy_class",),
    "mutating": ("is_mutating",),
    "hitl": ("hitl_tier",),
    "retry": ("effective_retry_class",),
    "findings": ("findings_count",),
}


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
        # Search and sorts at fifty thousand tools (catalog.selectors.catalog).
        TrigramExtensionOnPostgres(),
        migrations.AddField(
            model_name="tool",
            name="search_text",
            field=models.GeneratedField(
                db_persist=True,
                expression=Concat(
                    "declared_id",
                    Value("\n"),
                    "canonical_key",
                    Value("\n"),
                    "description",
                    Value("\n"),
                    "rag_description",
                    Value("\n"),
                    Cast("rag_keywords", models.TextField()),
                    output_field=models.TextField(),
                ),
                help_text="the searched texts in one column (a trigram index on PostgreSQL)",
                output_field=models.TextField(),
            ),
        ),
        *(
            migrations.AddIndex(
                model_name="tool",
                index=models.Index(
                    condition=LIVE, fields=[*columns, "declared_id", "system"], name=f"tool_live_{name}_idx"
                ),
            )
            for name, columns in SORTED_BY.items()
        ),
        AddIndexOnPostgres(
            model_name="tool",
            index=GinIndex(
                OpClass(Upper("search_text"), name="gin_trgm_ops"), condition=LIVE, name="tool_live_search_trgm"
            ),
        ),
    ]
