"""A revision's configuration changes, entry by entry and classed (catalog.domain.sections): what the revision page
shows a safety officer beside each profile and forced floor."""

from __future__ import annotations

from catalog.domain.sections import SectionEntry, section_entries

CLINICAL = ["clinical-production", True, ["production"], []]
STAGING = ["demo", False, ["demo-only", "production"], []]
INTAKE = ["intake", "multi-entity-intake", ["listActiveMedications", "listAllergies"]]


def _classed(section: str, old: list[list[object]], new: list[list[object]]) -> list[tuple[str, str, str | None]]:
    return [(e.name, e.what, e.klass) for e in section_entries(section, old, new)]


def test_a_clinical_profile_widened_waits_and_narrowed_is_at_once() -> None:
    widened = ["clinical-production", True, ["preview", "production"], ["signDocument"]]
    assert _classed("profiles", [CLINICAL, STAGING], [widened, STAGING]) == [
        ("clinical-production", "availability + preview", "weakening"),
        ("clinical-production", "include + signDocument", "weakening"),
    ]
    assert _classed("profiles", [widened], [CLINICAL]) == [
        ("clinical-production", "availability − preview", "strengthening"),
        ("clinical-production", "include − signDocument", "strengthening"),
    ]


def test_a_staging_profile_is_not_governed_and_a_new_clinical_one_waits() -> None:
    wider = ["demo", False, ["demo-only", "preview", "production"], []]
    assert _classed("profiles", [STAGING], [wider]) == [("demo", "availability + preview", None)]
    assert _classed("profiles", [STAGING], [STAGING, CLINICAL]) == [("clinical-production", "added", "weakening")]
    assert _classed("profiles", [STAGING, CLINICAL], [CLINICAL]) == [("demo", "removed", None)]


def test_a_forced_floor_dropped_narrowed_or_moved_waits_and_one_added_or_widened_is_at_once() -> None:
    narrowed = ["intake", "multi-entity-intake", ["listActiveMedications"]]
    moved = ["intake", "attachments", ["listActiveMedications", "listAllergies", "recordVitals"]]
    assert _classed("forcedFloors", [INTAKE], []) == [("intake", "removed", "weakening")]
    assert _classed("forcedFloors", [], [INTAKE]) == [("intake", "added", "strengthening")]
    assert _classed("forcedFloors", [INTAKE], [narrowed]) == [("intake", "tools − listAllergies", "weakening")]
    assert _classed("forcedFloors", [INTAKE], [moved]) == [
        ("intake", "trigger multi-entity-intake → attachments", "weakening"),
        ("intake", "tools + recordVitals", "strengthening"),
    ]


def test_sections_no_runtime_reader_serves_from_are_unclassed() -> None:
    for section in ("teams", "ownership", "agents", "baselineCount"):
        assert section_entries(section, [], [["x"]]) == [SectionEntry(section, "", "changed", None)]
