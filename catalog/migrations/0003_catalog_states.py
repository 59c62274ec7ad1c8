from __future__ import annotations

from django.db import migrations

SYSTEMS = ("condor", "tucan")


def create_states(apps, schema_editor):
    # One lock row per system exists before the first import, so concurrent first imports queue on it.
    CatalogState = apps.get_model("catalog", "CatalogState")
    for system in SYSTEMS:
        CatalogState.objects.get_or_create(system=system)


class Migration(migrations.Migration):
    dependencies = [("catalog", "0002_role_groups")]

    operations = [migrations.RunPython(create_states, migrations.RunPython.noop)]
