from __future__ import annotations

from catalog.domain.vocabulary import ReviewState
from catalog.models.audit import AuditChainHead, AuditEvent, AuditLogIsAppendOnly
from catalog.models.cards import CardFinding, CardLocale, CardsState, CardString, CardTranslation
from catalog.models.catalog import (
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
from catalog.models.console import UserPreference
from catalog.models.floors import TierFloor
from catalog.models.governance import Finding, RevisionReview, Severity, Waiver
from catalog.models.imports import ImportJob
from catalog.models.mcp import McpServer
from catalog.models.rag import RetrievalEvaluation, ToolEmbedding
from catalog.models.usage import CandidateSet, MutatingCall, TelemetrySource, ToolExecution, ToolUsage, UnknownToolName

__all__ = [
    "Agent",
    "ApiToken",
    "AuditChainHead",
    "AuditEvent",
    "AuditLogIsAppendOnly",
    "CandidateSet",
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
    "ImportJob",
    "McpServer",
    "MutatingCall",
    "OwnershipRule",
    "RetrievalEvaluation",
    "ReviewState",
    "RevisionReview",
    "Severity",
    "Team",
    "TelemetrySource",
    "TierFloor",
    "Tool",
    "ToolChange",
    "ToolEmbedding",
    "ToolExecution",
    "ToolUsage",
    "UnknownToolName",
    "UserPreference",
    "Waiver",
]
