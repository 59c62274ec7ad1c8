from __future__ import annotations

import pytest

from catalog.domain.colours import colour_literals
from catalog.domain.descriptor import Descriptor
from catalog.domain.metadata import metadata_v2


@pytest.mark.parametrize(
    "text",
    [
        "Use #fff for the header",
        "badge #A1B2C3",
        "text rgb(255, 0, 0)",
        "RGBA(0,0,0,.5) overlay",
        "hsl(120 50% 50%)",
        "paint it red",
        "Severity in Crimson",
        "use transparent borders",
        "#ff000080 glow",
    ],
)
def test_colour_literals_are_found(text: str) -> None:
    assert colour_literals(text)


@pytest.mark.parametrize(
    "text",
    [
        "Use the severity badge; list newest first.",
        "Show the dose in bold, route in brackets.",
        "Group results by #1 priority",
        "Render as a table with headers",
        "use the theme token --danger",
    ],
)
def test_plain_styling_has_no_colour_literal(text: str) -> None:
    assert colour_literals(text) == []


def test_colour_literals_are_reported_in_order() -> None:
    assert colour_literals("red then #000 then rgb(1,2,3)") == ["red", "#000", "rgb(...)"]


def test_metadata_v2_is_a_projection_with_provenance() -> None:
    d = Descriptor(
        declared_id="prescribeMedication",
        plane="business",
        module="medication",
        availability="production",
        mutating=True,
        retry_class="transient",
        idempotency="durable-required",
        policy_class=None,
        hitl_tier="high",
        metadata_ref="tools/medication/prescribe.rag.ts#meta",
    )
    meta = metadata_v2(d, owner_team="meds")
    assert meta["canonicalKey"] == "prescribe.medication"
    assert meta["policy"] == {"class": "mutate", "declaredClass": None, "domain": None, "hitlTier": "high"}
    assert meta["retry"] == {"declared": "transient", "effective": "none"}
    assert meta["sideEffects"]["mutating"] is True
    assert meta["owner"] == "meds"
    assert meta["metadataRef"] == "tools/medication/prescribe.rag.ts#meta"
