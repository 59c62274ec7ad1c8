"""The configuration signed off, per system (catalog.selectors.served). A database that already serves catalogs
served their stored profiles and forced floors as they are: that becomes what is signed off, and only later
changes wait for a safety officer."""

from django.db import migrations, models


def sections_as_served(apps, schema_editor):
    CatalogState = apps.get_model("catalog", "CatalogState")
    CatalogProfile = apps.get_model("catalog", "CatalogProfile")
    ForcedFloor = apps.get_model("catalog", "ForcedFloor")
    for state in CatalogState.objects.all():
        state.signed_sections = {
            "profiles": {
                p.slug: {"availabilities": list(p.availabilities or []), "includes": list(p.includes or [])}
                for p in CatalogProfile.objects.filter(system=state.system)
            },
            "forcedFloors": {
                f.slug: {"trigger": f.trigger, "tools": list(f.tool_ids or [])}
                for f in ForcedFloor.objects.filter(system=state.system)
            },
        }
        state.save(update_fields=["signed_sections"])


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0026_floor_second_officer"),
    ]

    operations = [
        migrations.AddField(
            model_name="catalogstate",
            name="signed_sections",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(sections_as_served, migrations.RunPython.noop),
    ]
