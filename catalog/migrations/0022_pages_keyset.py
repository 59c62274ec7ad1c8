"""Issue 24, console pages: the sort indexes end in the tool's id, so a page's ids are read from the index alone;
a team's live tools have an index in the catalog's order.

The catalog browser reads a page in two steps (catalog.selectors.catalog.CatalogRows): the page's ids in the sort's
order, then those rows. With the id in the index, OFFSET walks the index only (an index-only scan, no table rows
touched); without it PostgreSQL read and sorted the whole table for a deep page. The id is the key's last column
rather than an INCLUDE column so that SQLite (which has no INCLUDE) builds the same index."""

from __future__ import annotations

from django.db import migrations, models
from django.db.models import Q

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
    dependencies = [("catalog", "0021_large_imports")]

    operations: list[migrations.operations.base.Operation] = [
        *(migrations.RemoveIndex(model_name="tool", name=f"tool_live_{name}_idx") for name in SORTED_BY),
        *(
            migrations.AddIndex(
                model_name="tool",
                index=models.Index(
                    condition=LIVE, fields=[*columns, "declared_id", "system", "id"], name=f"tool_live_{name}_idx"
                ),
            )
            for name, columns in SORTED_BY.items()
        ),
        migrations.AddIndex(
            model_name="tool",
            index=models.Index(
                condition=LIVE, fields=["owner", "declared_id", "system", "id"], name="tool_live_owner_idx"
            ),
        ),
    ]
