"""Importing a catalog manifest: one transaction, a revision with per-tool diffs, or nothing at all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from catalog.core.audit import Actor, AuditAction, audit_record
from catalog.domain.descriptor import DECLARED_FIELDS, Descriptor
from catalog.domain.diff import field_changes, safety_fields
from catalog.domain.effect import (
    WEAKENING,
    awaits_signoff,
    change_classes,
    needs_two_signoffs,
    project,
)
from catalog.domain.keys import canonical_key, llm_name
from catalog.domain.manifest import Manifest, ManifestError, load_manifest, manifest_sha256
from catalog.domain.ownership import derive_owner
from catalog.domain.policy import effective_policy_class, effective_retry_class, is_mutating
from catalog.domain.profiles import clinical_profile_problems
from catalog.domain.rules.scope import lint_fingerprint
from catalog.domain.vocabulary import SAFETY_RELEVANT_SECTIONS, ChangeKind, Plane, ReviewState
from catalog.models import CatalogProfile, CatalogRevision, CatalogState, OwnershipRule, Team, Tool, ToolChange
from catalog.rag.domain.text import rag_text_hash
from catalog.rag.selectors.vectors import tools_needing_vectors
from catalog.rag.services.siblings import siblings_mark_stale
from catalog.rag.services.vectors import embeddings_enqueue
from catalog.services.config_sections import config_changes_since, config_replace, ownership_sync, teams_sync
from catalog.services.findings import foreign_findings_refresh
from catalog.services.import_findings import import_findings_store, lint_scope
from catalog.services.import_plan import FieldChanges, ToolPlan, tools_plan
from catalog.services.import_progress import ImportProgress
from catalog.services.mcp_servers import mcp_server_store


@dataclass
class ImportResult:
    system: str
    revision: CatalogRevision | None
    unchanged: bool
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    safety_relevant: list[str] = field(default_factory=list)
    config_changes: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        if self.unchanged:
            latest = f" (matches {self.revision})" if self.revision else ""
            return f"{self.system}: unchanged{latest}; nothing written"
        assert self.revision is not None
        r = self.revision
        sections = f"; config changed: {', '.join(sorted(self.config_changes))}" if self.config_changes else ""
        return (
            f"{r}: {r.tool_count} live tools; {len(self.added)} added, {len(self.removed)} removed, "
            f"{len(self.changed)} changed ({len(self.safety_relevant)} with safety-relevant changes){sections}"
        )


def derived_fields(descriptor: Descriptor, owner_rule: OwnershipRule | None) -> dict[str, Any]:
    """Every derived column of a tool, from the pure derivations."""
    d = descriptor
    return {
        "canonical_key": canonical_key(d.declared_id),
        "llm_name": llm_name(d.declared_id),
        "is_mutating": is_mutating(mutating=d.mutating, policy_class=d.policy_class),
        "effective_policy_class": effective_policy_class(mutating=d.mutating, policy_class=d.policy_class),
        "effective_retry_class": effective_retry_class(
            mutating=d.mutating, policy_class=d.policy_class, retry_class=d.retry_class
        ),
        "owner_id": owner_rule.team_id if owner_rule else None,
        "owner_rule_id": owner_rule.pk if owner_rule else None,
        "rag_text_sha256": rag_text_hash(d.rag_description, d.rag_keywords),
    }


def catalog_import(
    *,
    raw: bytes,
    via: str,
    imported_by: User | None = None,
    actor: Actor | None = None,
    on_step: Callable[[str], None] | None = None,
) -> ImportResult:
    """Import a manifest. Raises ManifestError (nothing written) when it has any problem.

    `via` says how it arrived (cli, api token, demo); `actor` is who the audit log names (by default the
    importing user, else `via`); `on_step` is told each step as it completes (an import job's status).
    """
    if actor is None:
        actor = Actor.for_user(imported_by) if imported_by is not None else Actor(label=via)
    with transaction.atomic():
        return _import_locked(raw=raw, via=via, imported_by=imported_by, actor=actor, progress=ImportProgress(on_step))


def _import_locked(
    *, raw: bytes, via: str, imported_by: User | None, actor: Actor, progress: ImportProgress
) -> ImportResult:
    """The import inside its transaction, as its named steps: read and compare first (nothing written when
    nothing changed), then teams and rules, the revision, the tools, the configuration, findings, audit."""
    unchanged = _unchanged_current(raw)
    if unchanged is not None:
        return unchanged
    manifest = _parse(raw)
    system = progress.system = manifest.system
    progress.step(f"read and checked {len(manifest.tools)} tool(s)")
    state, latest = _lock_system(system)
    if latest is not None and latest.manifest_sha256 == manifest.sha256:
        return ImportResult(system=system, revision=latest, unchanged=True)
    _refuse_weakened_clinical_profiles(manifest)
    config_changes = config_changes_since(manifest, latest)
    plan, stored_pks = tools_plan(manifest, system)
    if plan.empty and not config_changes:
        return ImportResult(system=system, revision=latest, unchanged=True)
    lint_tools = lint_scope(manifest, plan, latest, config_changes)  # before the plan's tools are changed
    progress.step(
        f"compared: {len(plan.added) + len(plan.revived)} to add, {len(plan.updated)} changed, "
        f"{len(plan.retiring)} to retire"
    )

    # Teams and ownership rules first: tools point at them.
    teams = teams_sync(manifest)
    rule_index = {(r.plane, r.module): r for r in ownership_sync(manifest, teams)}
    revision = _create_revision(manifest, latest, config_changes, via=via, imported_by=imported_by)
    result = ImportResult(system=system, revision=revision, unchanged=False, config_changes=config_changes)
    changes: list[ToolChange] = []
    created = _insert_tools(plan, revision, rule_index, changes, result)
    touched = _update_tools(plan, revision, rule_index, changes, result)
    touched += _retire_tools(plan, revision, rule_index, changes, result)
    if "ownership" in config_changes or "teams" in config_changes:
        touched += _rederive_owners(revision, manifest, rule_index, touched)
    _save_tools(touched, changes)
    if {"profiles", "forcedFloors", "agents"} & set(config_changes):
        config_replace(manifest)
    _count_and_review(revision, result, changes, created + touched)
    progress.step(f"wrote revision {revision.number} and its {len(changes)} change(s)")

    tool_pks = {t.declared_id: t.pk for t in created}
    tool_pks.update(stored_pks)
    # Their vectors (and their stored siblings') are checked again by the worker's sibling refresh (catalog.rag).
    siblings_mark_stale(system, plan.sibling_stale)
    import_findings_store(manifest, revision, teams, rule_index, tool_pks, plan.sibling_stale, lint_tools)
    state.current_revision = revision
    state.save(update_fields=["current_revision"])
    mcp_server_store(manifest, revision)
    _audit_import(actor, latest, revision, result)
    progress.step("stored the findings")
    # New or changed embedded texts (and anything still missing a vector) go to the worker after commit.
    embeddings_enqueue(tools_needing_vectors(system=system))
    # Names this catalog brings or drops may be shadowed by (or shadow) another MCP server's tools.
    transaction.on_commit(lambda: foreign_findings_refresh(system))
    return result


def _refuse_weakened_clinical_profiles(manifest: Manifest) -> None:
    """A clinical profile stays clinical and stays (catalog.domain.profiles.clinical_profile_problems)."""
    stored = CatalogProfile.objects.filter(system=manifest.system, clinical=True).values_list("slug", flat=True)
    problems = clinical_profile_problems(set(stored), [(p.id, p.clinical) for p in manifest.profiles])
    if problems:
        raise ManifestError(problems)


def _unchanged_current(raw: bytes) -> ImportResult | None:
    """The byte-identical manifest of a system's current revision was valid and fully applied: the import is
    'unchanged' without parsing (one query)."""
    identical = (
        CatalogState.objects.select_related("current_revision")
        .filter(current_revision__manifest_sha256=manifest_sha256(raw))
        .first()
    )
    if identical is None:
        return None
    return ImportResult(system=identical.system, revision=identical.current_revision, unchanged=True)


def _parse(raw: bytes) -> Manifest:
    """Parse and validate the manifest (ownership may name teams already stored); ManifestError lists every
    problem."""
    return load_manifest(raw, known_team_ids=Team.objects.values_list("slug", flat=True))


def _lock_system(system: str) -> tuple[CatalogState, CatalogRevision | None]:
    """Serialize imports of one system: the second waits here until the first commits, then diffs against
    what the first wrote (never interleaved). Returns the locked state row and the current revision."""
    state, _ = CatalogState.objects.get_or_create(system=system)
    # Lock the bare row, then read the revision in a new statement: under READ COMMITTED a joined
    # read in the locking statement would see the revision row from before the wait (a stale number).
    state = CatalogState.objects.select_for_update().get(pk=state.pk)
    latest = (
        CatalogRevision.objects.filter(pk=state.current_revision_id).first()
        if state.current_revision_id is not None
        else None
    )
    return state, latest


def _create_revision(
    manifest: Manifest,
    latest: CatalogRevision | None,
    config_changes: dict[str, Any],
    *,
    via: str,
    imported_by: User | None,
) -> CatalogRevision:
    """The system's next revision row; its counts and review state are filled in by `_count_and_review`."""
    return CatalogRevision.objects.create(
        system=manifest.system,
        number=(latest.number + 1) if latest else 1,
        format=manifest.format,
        manifest_sha256=manifest.sha256,
        source_repository=manifest.source_repository,
        source_commit=manifest.source_commit,
        imported_by=imported_by,
        imported_via=via,
        baseline_count=manifest.baseline_count,
        tool_count=0,
        config_changes=config_changes,
        lint_fingerprint=lint_fingerprint(),  # the findings this import stores are made by the rules' code running
    )


def _insert_tools(
    plan: ToolPlan,
    revision: CatalogRevision,
    rule_index: dict[tuple[str, str], OwnershipRule],
    changes: list[ToolChange],
    result: ImportResult,
) -> list[Tool]:
    """Insert the added tools (declared and derived columns) in batches; record each one's change (and mark the
    tools whose change is safety-relevant before they are written, so no second statement revisits them)."""
    tools = [
        Tool(
            system=revision.system,
            declared_id=d.declared_id,
            content_hash=d.content_hash(),
            first_revision=revision,
            last_changed_revision=revision,
            # A new tool has nothing in effect: it does not exist for a clinical profile until signed off.
            in_effect=None,
            awaiting_signoff=True,
            **d.declared(),
            **derived_fields(d, derive_owner(d.plane, d.module, rule_index)),
        )
        for d, _ in plan.added
    ]
    for tool, (descriptor, fields) in zip(tools, plan.added, strict=True):
        change = _change(revision, tool, ChangeKind.ADDED, fields, None, descriptor.declared())
        if change.safety_relevant:
            tool.safety_revision = revision
        changes.append(change)
        result.added.append(descriptor.declared_id)
    # Batches: one INSERT of 50,000 rows binds millions of parameters (slower on PostgreSQL than 50 of 1,000).
    return Tool.objects.bulk_create(tools, batch_size=1000)


def _update_tools(
    plan: ToolPlan,
    revision: CatalogRevision,
    rule_index: dict[tuple[str, str], OwnershipRule],
    changes: list[ToolChange],
    result: ImportResult,
) -> list[Tool]:
    """Apply the new declaration to revived and updated tools (in memory; `_save_tools` writes them). A revived
    tool counts as added again."""
    touched: list[Tool] = []
    for tool, descriptor, fields in plan.revived + plan.updated:
        kind = ChangeKind.ADDED if tool.retired_in_id is not None else ChangeKind.CHANGED
        before = None if kind == ChangeKind.ADDED else tool.declared()
        _apply(tool, descriptor, rule_index)
        _project_in_effect(tool, revision, None if kind == ChangeKind.ADDED else tool.in_effect)
        tool.retired_in = None
        tool.last_changed_revision = revision
        touched.append(tool)
        change = _change(revision, tool, kind, fields, before, descriptor.declared())
        if change.safety_relevant:
            tool.safety_revision = revision
        changes.append(change)
        (result.added if kind == ChangeKind.ADDED else result.changed).append(descriptor.declared_id)
    return touched


def _retire_tools(
    plan: ToolPlan,
    revision: CatalogRevision,
    rule_index: dict[tuple[str, str], OwnershipRule],
    changes: list[ToolChange],
    result: ImportResult,
) -> list[Tool]:
    """Retire the live tools the manifest no longer declares (in memory; kept, with their history). A retired
    tool keeps the team that owned it; the rule that made it so is forgotten when the manifest dropped the rule
    (its row is gone: the tool was read before the rules were synced, and writing it back with the old rule's id
    broke the foreign key at commit, an IntegrityError and an HTTP 500 instead of an import)."""
    kept_rules = {rule.pk for rule in rule_index.values()}
    for tool in plan.retiring:
        if tool.owner_rule_id is not None and tool.owner_rule_id not in kept_rules:
            tool.owner_rule = None
        before = tool.declared()
        tool.retired_in = revision
        tool.last_changed_revision = revision
        # Removing a tool strengthens the catalog: it takes effect now, for every profile.
        tool.awaiting_signoff = False
        change = _change(revision, tool, ChangeKind.REMOVED, field_changes(before, {}), before, None)
        if change.safety_relevant:
            tool.safety_revision = revision
        changes.append(change)
        result.removed.append(tool.declared_id)
    return list(plan.retiring)


def _rederive_owners(
    revision: CatalogRevision,
    manifest: Manifest,
    rule_index: dict[tuple[str, str], OwnershipRule],
    touched: list[Tool],
) -> list[Tool]:
    """Owners are derived: when the rules changed, re-derive them for every live tool that kept its declaration
    (the tools this revision added, changed or retired were derived from the new rules as they were written).
    Returns the tools whose owner changed (in memory)."""
    touched_ids = {t.pk for t in touched}
    declared = {d.declared_id for d in manifest.tools}
    moved: list[Tool] = []
    for tool in Tool.objects.filter(system=revision.system).live().exclude(last_changed_revision=revision):
        if tool.pk in touched_ids or tool.declared_id not in declared:
            continue
        rule = derive_owner(tool.plane, tool.module, rule_index)
        new_owner = (rule.team_id, rule.pk) if rule else (None, None)
        if (tool.owner_id, tool.owner_rule_id) != new_owner:
            tool.owner_id, tool.owner_rule_id = new_owner
            moved.append(tool)
    return moved


# Every column an import may change on a stored tool.
_TOOL_UPDATE_FIELDS = [
    *DECLARED_FIELDS,
    "content_hash",
    "rag_text_sha256",
    "canonical_key",
    "llm_name",
    "is_mutating",
    "effective_policy_class",
    "effective_retry_class",
    "owner",
    "owner_rule",
    "retired_in",
    "last_changed_revision",
    "in_effect",
    "in_effect_revision",
    "in_effect_text_sha256",
    "awaiting_signoff",
    "safety_revision",
]


def _save_tools(touched: list[Tool], changes: list[ToolChange]) -> None:
    """Write the updated, revived, retired and re-owned tools, then every per-tool change, in batches."""
    if touched:
        Tool.objects.bulk_update(touched, _TOOL_UPDATE_FIELDS, batch_size=500)
    ToolChange.objects.bulk_create(changes, batch_size=1000)


def _count_and_review(
    revision: CatalogRevision, result: ImportResult, changes: list[ToolChange], touched: list[Tool]
) -> None:
    """Fill in the revision's counts and safety-relevant changes. A revision that leaves no tool awaiting sign-off
    (no change, or only strengthening ones) and changes no safety-relevant section is approved by itself, and says
    so; one whose weakening change touches a tier-high tool needs two sign-offs. (The tools whose safety axes
    changed were marked as their changes were recorded.)"""
    system = revision.system
    live = Tool.objects.filter(system=system).live()
    revision.tool_count = live.count()
    revision.business_tool_count = live.filter(plane=Plane.BUSINESS.value).count()
    revision.added_count = len(result.added)
    revision.removed_count = len(result.removed)
    revision.changed_count = len(result.changed)
    result.safety_relevant = sorted(c.declared_id for c in changes if c.safety_relevant)
    revision.safety_change_count = len(result.safety_relevant)
    safety_sections = sorted(set(SAFETY_RELEVANT_SECTIONS) & set(result.config_changes))
    waiting = {c.tool_id for c in changes if c.weakening}
    waiting_tools = [t for t in touched if t.pk in waiting and t.awaiting_signoff]
    revision.weakening_count = len(waiting_tools)
    if any(needs_two_signoffs(t.in_effect, t.declared()) for t in waiting_tools):
        revision.signoffs_required = 2
    if not waiting_tools and not safety_sections:
        revision.review_state = ReviewState.APPROVED.value
        revision.auto_approved = True
    revision.save()


def _audit_import(
    actor: Actor, latest: CatalogRevision | None, revision: CatalogRevision, result: ImportResult
) -> None:
    """The revision's audit event, in the import transaction: what it added, removed, changed, and its review."""
    audit_record(
        actor=actor,
        action=AuditAction.CATALOG_REVISION_IMPORTED,
        object_type="catalog.revision",
        object_id=str(revision),
        before={"revision": latest.number if latest else None},
        after={
            "revision": revision.number,
            "manifest_sha256": revision.manifest_sha256,
            "added": result.added,
            "removed": result.removed,
            "changed": result.changed,
            "safety_relevant": result.safety_relevant,
            "config_sections": sorted(result.config_changes),
            "review_state": revision.review_state,
        },
    )


def _apply(tool: Tool, descriptor: Descriptor, rule_index: dict[tuple[str, str], OwnershipRule]) -> None:
    """Set a stored tool's declared and derived columns from its new declaration (in memory)."""
    for name, value in descriptor.declared().items():
        setattr(tool, name, value)
    tool.content_hash = descriptor.content_hash()
    for name, value in derived_fields(
        descriptor, derive_owner(descriptor.plane, descriptor.module, rule_index)
    ).items():
        setattr(tool, name, value)


def _change(
    revision: CatalogRevision,
    tool: Tool,
    kind: ChangeKind,
    fields: FieldChanges,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> ToolChange:
    """The per-tool change row of this revision: each governed field that changed, classed as strengthening or
    weakening (`catalog.domain.effect`); `before`/`after` are the declarations (None: the tool came or went)."""
    classes = change_classes(before, after)
    axes = safety_fields(fields)
    relevant = axes + [name for name in classes if name in fields and name not in axes]
    return ToolChange(
        revision=revision,
        tool=tool,
        declared_id=tool.declared_id,
        kind=kind.value,
        fields=fields,
        safety_fields=relevant,
        safety_relevant=bool(classes),
        classes=classes,
        weakening=WEAKENING in classes.values(),
    )


def _project_in_effect(tool: Tool, revision: CatalogRevision, in_effect: dict[str, Any] | None) -> None:
    """What clinical profiles are served after this import: strengthening changes now, weakening ones after
    sign-off (`project`). `in_effect` None: the tool is new (or revived) and waits as a whole."""
    declared = tool.declared()
    projected = project(in_effect, declared)
    if projected != in_effect:
        tool.in_effect_revision = revision
    tool.in_effect = projected
    tool.in_effect_text_sha256 = (
        rag_text_hash(projected["rag_description"], projected["rag_keywords"]) if projected else ""
    )
    tool.awaiting_signoff = awaits_signoff(projected, declared)
