"""The demo catalogs as a newcomer meets them: both systems imported by the demo catalog admin and signed off by
two demo safety officers, then one Condor revision that waits for review (it lowers the document-signing tool's
tier and rewrites the clinical-note tool's description), so the gate can be seen holding.

Loaded once: a system that already has revisions is left as it is (a second `make run` changes nothing).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from catalog.models import CatalogRevision
from catalog.services.imports import ImportResult, catalog_import
from catalog.services.signoff import revision_review

DEMO_DIR = Path(__file__).resolve().parents[1] / "demo"
MANIFESTS = ("condor.json", "tucan.json")

# The pending revision's changes, declared id → fields as the manifest spells them.
PENDING_CHANGES: dict[str, dict[str, Any]] = {
    "signDocument": {"hitlTier": "low"},
    "recordClinicalNote": {
        "ragDescription": (
            "USE WHEN: the clinician dictates, summarises or asks to save any note about the patient.\n"
            "DO NOT USE WHEN: an existing draft should be changed (use updateClinicalNoteDraft).\n"
            "REQUIRES: patientId, encounterId and the note text; the note type is optional.\n"
            "PRODUCES: a clinical note linked to the encounter."
        ),
    },
}


def pending_manifest(raw: bytes) -> bytes:
    """condor.json with the pending revision's changes applied."""
    manifest = json.loads(raw)
    for tool in manifest["tools"]:
        tool.update(PENDING_CHANGES.get(tool["id"], {}))
    manifest["source"] = {**manifest.get("source", {}), "commit": "demo-pending-review"}
    return json.dumps(manifest, ensure_ascii=False).encode("utf-8")


def catalog_demo_load(*, importer: User, officers: tuple[User, User]) -> list[str]:
    """Import, sign off and stage the demo catalogs; one summary line per step. Raises ManifestError."""
    lines: list[str] = []
    for name in MANIFESTS:
        raw = (DEMO_DIR / name).read_bytes()
        system = "condor" if name.startswith("condor") else "tucan"
        latest = CatalogRevision.objects.filter(system=system).order_by("-number").first()
        if latest is not None:
            lines.append(f"{system}: unchanged (the demo was loaded before; newest is {latest})")
            continue
        result = catalog_import(raw=raw, via=f"demo {name}", imported_by=importer)
        lines.append(result.summary())
        lines.extend(_sign_off(result, officers))
        if system == "condor":
            pending = catalog_import(raw=pending_manifest(raw), via="demo pending revision", imported_by=importer)
            lines.append(f"{pending.summary()}; waits for review")
    return lines


def _sign_off(result: ImportResult, officers: tuple[User, User]) -> list[str]:
    revision = result.revision
    if revision is None or revision.review_state == "approved":
        return []
    lines = []
    for officer in officers:
        signed = revision_review(
            revision_id=revision.pk,
            reviewer=officer,
            decision="approved",
            comment="Demo: reviewed the whole catalog against the seed's rules.",
        )
        lines.append(f"{revision} approved by {officer.username} ({signed.approvals} of {signed.required})")
        if signed.in_effect:
            break
    return lines
