"""The audit log anchored outside its own table (issue 19): a keyed chain, a MAC per event, a guarded table.

1. Every event gets a MAC of its contents (`nonce`, `mac`) and the head a MAC of its position (`mac`), all
   HMAC-SHA256 under CONDOR_AUDIT_KEY (catalog/models/audit.py).
2. The existing chain is re-keyed here, after it is verified with the unkeyed SHA-256 it was sealed with: from
   then on every link is keyed, so nothing in the database (such as a "keyed from" position an attacker could
   move) decides which links are checked the old, recomputable way. A broken chain is refused, with its first
   break named: re-keying it would seal the tampering in. Events appended before this migration are trusted
   as they stand (an unsealed forgery from before could not be told apart then either).
3. On PostgreSQL, triggers refuse every UPDATE and DELETE of events except sealing (seq, prev_hash and hash set
   on an unsealed row, nothing else changed), every change of the head except the sealer's forward move, and
   TRUNCATE of either table: for every client, the application's included. A test suite's flush may TRUNCATE
   when its session sets `condor.allow_audit_truncate = on` (tests/conftest.py does, for test connections only).
   Whoever owns the tables can still drop or disable the triggers: the key and the checkpoints outside the
   database are what catch that. A later migration that must rewrite audit rows drops these triggers first.
"""

import hashlib
import json
import secrets

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import migrations, models

from catalog.models.audit import event_mac, event_seal, head_mac

GENESIS_HASH = "0" * 64
BATCH = 1000


class ChainBroken(RuntimeError):
    pass


def legacy_hash(event):
    """The unkeyed SHA-256 the chain was sealed with before this migration (frozen here: the app no longer has it)."""
    payload = {
        "id": event.pk,
        "created_at": event.created_at.isoformat(),
        "actor_user": event.actor_user_id,
        "actor": event.actor,
        "action": event.action,
        "object_type": event.object_type,
        "object_id": event.object_id,
        "before": event.before,
        "after": event.after,
    }
    body = json.dumps(json.loads(json.dumps(payload, cls=DjangoJSONEncoder)), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256((event.prev_hash + body).encode("utf-8")).hexdigest()


def sealed_in_order(AuditEvent):
    last = 0
    while True:
        page = list(AuditEvent.objects.filter(seq__gt=last).order_by("seq")[:BATCH])
        if not page:
            return
        yield page
        last = page[-1].seq


def refuse(seq, why):
    raise ChainBroken(
        f"the audit chain is broken at event #{seq} ({why}): refusing to re-key it, which would seal the break in. "
        "Run `manage.py verify_audit_log` on the previous release to see it, and investigate before migrating."
    )


def rekey(apps, schema_editor):
    AuditEvent = apps.get_model("catalog", "AuditEvent")
    AuditChainHead = apps.get_model("catalog", "AuditChainHead")
    head = AuditChainHead.objects.filter(singleton=True).first()
    if AuditEvent.objects.exists() and not getattr(settings, "CONDOR_AUDIT_KEY", "") and not settings.DEBUG:
        raise RuntimeError(
            "set CONDOR_AUDIT_KEY before this migration: it re-keys the existing audit events with it, and events "
            "keyed with another key (such as the stand-in derived from SECRET_KEY) would later verify as edited"
        )
    expected, prev_legacy, prev_keyed = 1, GENESIS_HASH, GENESIS_HASH
    for page in sealed_in_order(AuditEvent):
        for event in page:
            if event.seq != expected:
                refuse(expected, f"it is missing; the next event is #{event.seq}")
            if event.prev_hash != prev_legacy or event.hash != legacy_hash(event):
                refuse(expected, "it was edited or does not link to the event before it")
            prev_legacy = event.hash
            event.nonce = secrets.token_hex(16)
            event.mac = event_mac(event)
            event.prev_hash = prev_keyed
            event.hash = prev_keyed = event_seal(event)
            expected += 1
        AuditEvent.objects.bulk_update(page, ["nonce", "mac", "prev_hash", "hash"])
    last = expected - 1
    if head is None and last:
        refuse(1, f"the chain head row is missing while {last} sealed event(s) exist")
    if head is not None and (head.last_seq != last or head.last_hash != prev_legacy):
        refuse(last + 1, f"the chain ends at #{last} but its head records #{head.last_seq}")
    unsealed = list(AuditEvent.objects.filter(seq__isnull=True))
    for event in unsealed:
        event.nonce = secrets.token_hex(16)
        event.mac = event_mac(event)
    AuditEvent.objects.bulk_update(unsealed, ["nonce", "mac"], batch_size=BATCH)
    if head is not None:
        head.last_hash = prev_keyed
        head.mac = head_mac(head)
        head.save(update_fields=["last_hash", "mac"])


def unkey(apps, schema_editor):
    """Back to the unkeyed chain, after verifying the keyed one (a reversal must not launder a broken chain)."""
    AuditEvent = apps.get_model("catalog", "AuditEvent")
    AuditChainHead = apps.get_model("catalog", "AuditChainHead")
    expected, prev_keyed, prev_legacy = 1, GENESIS_HASH, GENESIS_HASH
    for page in sealed_in_order(AuditEvent):
        for event in page:
            if event.seq != expected or event.prev_hash != prev_keyed or event.hash != event_seal(event):
                refuse(expected, "it is missing, edited or does not link to the event before it")
            prev_keyed = event.hash
            event.prev_hash = prev_legacy
            event.hash = prev_legacy = legacy_hash(event)
            expected += 1
        AuditEvent.objects.bulk_update(page, ["prev_hash", "hash"])
    AuditChainHead.objects.filter(singleton=True).update(last_hash=prev_legacy)


GUARDS = """
CREATE OR REPLACE FUNCTION condor_audit_event_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Sealing: an unsealed row gets its position and hashes; every other column stays as it was.
    IF TG_OP = 'UPDATE' AND OLD.seq IS NULL AND NEW.seq IS NOT NULL AND NEW.hash IS NOT NULL
       AND to_jsonb(NEW) - 'seq' - 'prev_hash' - 'hash' = to_jsonb(OLD) - 'seq' - 'prev_hash' - 'hash' THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'catalog_auditevent is append-only: % of event id % refused', TG_OP, OLD.id
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Only sealing (seq, prev_hash and hash of an unsealed event) may change an audit event.';
END $$;

CREATE OR REPLACE FUNCTION condor_audit_head_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The sealer's forward move: the head only ever advances.
    IF TG_OP = 'UPDATE' AND NEW.id = OLD.id AND NEW.singleton = OLD.singleton
       AND NEW.last_seq > OLD.last_seq AND NEW.count > OLD.count THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'catalog_auditchainhead only moves forward: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Only the sealer advances the audit chain head (last_seq increasing).';
END $$;

CREATE OR REPLACE FUNCTION condor_audit_truncate_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('condor.allow_audit_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION '% is append-only: TRUNCATE refused', TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER condor_audit_event_guard BEFORE UPDATE OR DELETE ON catalog_auditevent
    FOR EACH ROW EXECUTE FUNCTION condor_audit_event_guard();
CREATE TRIGGER condor_audit_event_truncate BEFORE TRUNCATE ON catalog_auditevent
    FOR EACH STATEMENT EXECUTE FUNCTION condor_audit_truncate_guard();
CREATE TRIGGER condor_audit_head_guard BEFORE UPDATE OR DELETE ON catalog_auditchainhead
    FOR EACH ROW EXECUTE FUNCTION condor_audit_head_guard();
CREATE TRIGGER condor_audit_head_truncate BEFORE TRUNCATE ON catalog_auditchainhead
    FOR EACH STATEMENT EXECUTE FUNCTION condor_audit_truncate_guard();
"""

DROP_GUARDS = """
DROP TRIGGER IF EXISTS condor_audit_event_guard ON catalog_auditevent;
DROP TRIGGER IF EXISTS condor_audit_event_truncate ON catalog_auditevent;
DROP TRIGGER IF EXISTS condor_audit_head_guard ON catalog_auditchainhead;
DROP TRIGGER IF EXISTS condor_audit_head_truncate ON catalog_auditchainhead;
DROP FUNCTION IF EXISTS condor_audit_event_guard();
DROP FUNCTION IF EXISTS condor_audit_head_guard();
DROP FUNCTION IF EXISTS condor_audit_truncate_guard();
"""


def run_on_postgres(sql):
    def run(apps, schema_editor):
        # SQLite has no such triggers to offer; there the ORM's append-only guard, the key and the checkpoints
        # are the protection.
        if schema_editor.connection.vendor == "postgresql":
            with schema_editor.connection.cursor() as cursor:
                cursor.execute(sql)  # no parameters: the function bodies' % signs stay as written

    return run


class Migration(migrations.Migration):
    dependencies = [("catalog", "0013_token_scopes")]

    operations = [
        migrations.AddField(
            model_name="auditevent",
            name="nonce",
            field=models.CharField(blank=True, default="", max_length=32),
        ),
        migrations.AddField(
            model_name="auditevent",
            name="mac",
            field=models.CharField(
                blank=True, help_text="HMAC of the contents, set when appended", max_length=64, null=True, unique=True
            ),
        ),
        migrations.AddField(
            model_name="auditchainhead",
            name="mac",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.RunPython(rekey, unkey),
        migrations.RunPython(run_on_postgres(GUARDS), run_on_postgres(DROP_GUARDS)),
    ]
