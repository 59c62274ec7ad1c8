from __future__ import annotations

from django.db import migrations

# Frozen here on purpose (a migration must not change when catalog.roles or the card locales grow later):
# the card-string reviewer role, and the two locales every deployment has: English (the source) and
# German (the clinic is German-first: required).
GROUPS = ("translator-reviewer",)
LOCALES = (("en", True), ("de", True))


def seed(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in GROUPS:
        Group.objects.get_or_create(name=name)
    CardLocale = apps.get_model("catalog", "CardLocale")
    for code, required in LOCALES:
        CardLocale.objects.get_or_create(code=code, defaults={"required": required})


def unseed(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=GROUPS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0006_cards"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(seed, unseed)]
