from __future__ import annotations

from django.db import migrations

# Frozen here on purpose (a migration must not change with settings): the default escalation group.
# Per-domain groups for TUCAN categories are created as their first requests arrive (approvals.notify).
GROUPS = ("approval-escalation",)


def create_groups(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in GROUPS:
        Group.objects.get_or_create(name=name)


def delete_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=GROUPS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(create_groups, delete_groups)]
