from __future__ import annotations

from ..domain.vocabulary import ReviewState
from .audit import AuditChainHead, AuditEvent, AuditLogIsAppendOnly
from .cards import CardFinding, CardLocale, CardsState, CardString, CardTranslation
from .catalog import (
    Agent,
    ApiToken,
    CatalogProfile,
    CatalogRevision,
    CatalogState,
    ForcedFloor,
    OwnershipRule,
    Team,
    Tool,
    ToolChange,
)
from .console import UserPreference
from .governance import Finding, RevisionReview, Severity, Waiver
from .rag import RetrievalEvaluation, ToolEmbedding

__all__ = [
    "Agent",
    "ApiToken",
    "AuditChainHead",
    "AuditEvent",
    "AuditLogIsAppendOnly",
    "CardFinding",
    "CardLocale",
    "CardString",
    "CardTranslation",
    "CardsState",
    "CatalogProfile",
    "CatalogRevision",
    "CatalogState",
    "Finding",
    "ForcedFloor",
    "OwnershipRule",
    "RetrievalEvaluation",
    "ReviewState",
    "RevisionReview",
    "Severity",
    "Team",
    "Tool",
    "ToolChange",
    "ToolEmbedding",
    "UserPreference",
    "Waiver",
]
