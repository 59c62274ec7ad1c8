"""The console's role groups (created by migrations catalog.0002 and, for translator-reviewer, catalog.0007)."""

from __future__ import annotations

SAFETY_OFFICER = "safety-officer"
ON_CALL = "on-call"
APPROVER = "approver"
TRANSLATOR = "translator"
# Marks card-string translations reviewed (a second person: never the one who translated it).
TRANSLATOR_REVIEWER = "translator-reviewer"
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

ROLE_GROUPS = (SAFETY_OFFICER, ON_CALL, APPROVER, TRANSLATOR, TRANSLATOR_REVIEWER, CATALOG_ADMIN) + tuple(
    APPROVER_DOMAIN_PREFIX + d for d in APPROVER_DOMAINS
)


def approver_group(domain: str) -> str:
    return APPROVER_DOMAIN_PREFIX + domain
