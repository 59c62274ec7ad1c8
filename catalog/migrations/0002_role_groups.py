from __future__ import annotations

from django.db import migrations

# Frozen here on purpose: a migration must not change when catalog.roles grows later.
ROLE_GROUPS = (
    "safety-officer",
    "on-call",
    "approver",
    "translator",
    "catalog-admin",
    "approver:medication",
    "approver:billing",
    "approver:document",
    "approver:note",
    "approver:appointment",
    "approver:patient",
    "approver:lab",
    "approver:vitals",
    "approver:allergy",
    "approver:visit-recording",
)


def create_groups(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in ROLE_GROUPS:
        Group.objects.get_or_create(name=name)


def delete_groups(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Group.objects.filter(name__in=ROLE_GROUPS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(create_groups, delete_groups)]
