"""What the retrieval benchmarks share: eight clinician prompts (English and German) and a sign-off of the
benchmark's revision (clinical profiles retrieve only over what is in effect)."""

from __future__ import annotations

PROMPTS = [
    "Blutdruck und Puls eintragen",
    "show the medication list",
    "Termin nächste Woche bei Dr. Roth",
    "write the discharge letter",
    "Rechnung für heute erstellen",
    "which allergies are on file",
    "Laborwerte von gestern",
    "record a clinical note",
]


def sign_off(revision_pk: int) -> None:
    """Two safety officers approve the revision: clinical profiles (clinical-production) retrieve only over what
    is in effect, and a catalog never signed off has nothing in effect, so resolution would rank nothing."""
    from django.contrib.auth.models import Group, User

    from catalog.core import roles
    from catalog.services.signoff import revision_review

    group = Group.objects.get_or_create(name=roles.SAFETY_OFFICER)[0]
    for i in range(2):
        officer = User.objects.get_or_create(username=f"bench-officer{i}")[0]
        officer.groups.add(group)
        revision_review(revision_id=revision_pk, reviewer=officer, decision="approved", comment="bench")
