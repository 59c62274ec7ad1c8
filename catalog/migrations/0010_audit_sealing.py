"""Audit events are appended with one INSERT and sealed into the chain afterwards (see catalog.models.audit).

Existing events were chained in id order with contiguous ids: their chain position is their id.
"""

from django.core.management.color import no_style
from django.db import migrations, models


def positions_from_ids(apps, schema_editor):
    AuditEvent = apps.get_model("catalog", "AuditEvent")
    AuditEvent.objects.filter(seq__isnull=True).update(seq=models.F("id"))
    # Ids were assigned by the application until now: move the database's own sequence past them.
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_sql(no_style(), [AuditEvent]):
            cursor.execute(sql)


class Migration(migrations.Migration):

    dependencies = [
        ("catalog", "0009_retrieval_evaluations"),
    ]

    operations = [
        migrations.RenameField(model_name="auditchainhead", old_name="last_event_id", new_name="last_seq"),
        migrations.AddField(
            model_name="auditevent",
            name="seq",
            field=models.BigIntegerField(blank=True, help_text="position in the hash chain", null=True, unique=True),
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="prev_hash",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="hash",
            field=models.CharField(blank=True, max_length=64, null=True, unique=True),
        ),
        migrations.RunPython(positions_from_ids, migrations.RunPython.noop),
    ]
