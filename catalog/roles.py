"""The console's role groups (created by migration catalog.0002)."""

from __future__ import annotations

SAFETY_OFFICER = "safety-officer"
ON_CALL = "on-call"
APPROVER = "approver"
TRANSLATOR = "translator"
CATALOG_ADMIN = "catalog-admin"
APPROVER_DOMAIN_PREFIX = "approver:"

# Per-domain approver groups for the policy domains of the clinical catalog.
APPROVER_DOMAINS = (
    "medication",
    "billing",
    "document",
    "note",
    "appointment",
    "patient",
    "lab",
    "vitals",
    "allergy",
    "visit-recording",
)

ROLE_GROUPS = (SAFETY_OFFICER, ON_CALL, APPROVER, TRANSLATOR, CATALOG_ADMIN) + tuple(
    APPROVER_DOMAIN_PREFIX + d for d in APPROVER_DOMAINS
)


def approver_group(domain: str) -> str:
    return APPROVER_DOMAIN_PREFIX + domain
