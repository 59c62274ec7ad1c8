"""CondorToolMetadataV2: a pure projection of the descriptor and its derivations.

It adds no second source of truth; metadataRef stays as provenance.
"""

from __future__ import annotations

from typing import Any

from catalog.domain.descriptor import Descriptor
from catalog.domain.keys import canonical_key, llm_name
from catalog.domain.policy import effective_policy_class, effective_retry_class, is_mutating


def metadata_v2(descriptor: Descriptor, *, owner_team: str | None) -> dict[str, Any]:
    d = descriptor
    return {
        "id": d.declared_id,
        "canonicalKey": canonical_key(d.declared_id),
        "llmName": llm_name(d.declared_id),
        "plane": d.plane,
        "module": d.module,
        "availability": d.availability,
        "policy": {
            "class": effective_policy_class(mutating=d.mutating, policy_class=d.policy_class),
            "declaredClass": d.policy_class,
            "domain": d.policy_domain,
            "hitlTier": d.hitl_tier,
        },
        "sideEffects": {
            "mutating": is_mutating(mutating=d.mutating, policy_class=d.policy_class),
            "idempotency": d.idempotency,
        },
        "retry": {
            "declared": d.retry_class,
            "effective": effective_retry_class(
                mutating=d.mutating, policy_class=d.policy_class, retry_class=d.retry_class
            ),
        },
        "owner": owner_team,
        "rag": {"description": d.rag_description, "keywords": d.rag_keywords},
        "fragments": {"instruction": d.instruction_fragment, "styling": d.styling_fragment},
        "output": {"instructions": d.output_instructions, "containsIds": d.output_contains_ids},
        "alwaysInclude": d.always_include,
        "metadataRef": d.metadata_ref,
    }
