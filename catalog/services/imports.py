"""Importing a catalog manifest: one transaction, a revision with per-tool diffs, or nothing at all."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from catalog.core.audit import Actor, audit_record
from catalog.domain.descriptor import DECLARED_FIELDS, Descriptor
from catalog.domain.diff import field_changes, safety_fields
from catalog.domain.keys import canonical_key, llm_name
from catalog.domain.manifest import Manifest, load_manifest, manifest_sha256
from catalog.domain.ownership import derive_owner
from catalog.domain.policy import effective_policy_class, effective_retry_class, is_mutating
from catalog.domain.vocabulary import SAFETY_RELEVANT_SECTIONS, ChangeKind, Plane, ReviewState
from catalog.models import (
    Agent,
    CatalogProfile,
    CatalogRevision,
    CatalogState,
    ForcedFloor,
    OwnershipRule,
    Team,
    Tool,
    ToolChange,
)
from catalog.rag.siblings_store import sibling_pairs_for
from catalog.rag.text import rag_text_hash
from catalog.rag.vectors import embeddings_enqueue, tools_needing_vectors
from catalog.services.findings import findings_store, lint_view_from_manifest


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
    *, raw: bytes, via: str, imported_by: User | None = None, actor: Actor | None = None
) -> ImportResult:
    """Import a manifest. Raises ManifestError (nothing written) when it has any problem.

    `via` says how it arrived (cli, api token, demo); `actor` is who the audit log names (by default the
    importing user, else `via`).
    """
    if actor is None:
        actor = Actor.for_user(imported_by) if imported_by is not None else Actor(label=via)
    with transaction.atomic():
        return _import_locked(raw=raw, via=via, imported_by=imported_by, actor=actor)


def _import_locked(*, raw: bytes, via: str, imported_by: User | None, actor: Actor) -> ImportResult:
    # The byte-identical manifest of a system's current revision was valid and fully applied: skip parsing.
    identical = (
        CatalogState.objects.select_related("current_revision")
        .filter(current_revision__manifest_sha256=manifest_sha256(raw))
        .first()
    )
    if identical is not None:
        return ImportResult(system=identical.system, revision=identical.current_revision, unchanged=True)
    manifest = load_manifest(raw, known_team_ids=Team.objects.values_list("slug", flat=True))
    system = manifest.system
    # Serialize imports of one system: the second waits here until the first commits, then diffs
    # against what the first wrote (never interleaved).
    state, _ = CatalogState.objects.get_or_create(system=system)
    # Lock the bare row, then read the revision in a new statement: under READ COMMITTED a joined
    # read in the locking statement would see the revision row from before the wait (a stale number).
    state = CatalogState.objects.select_for_update().get(pk=state.pk)
    latest = (
        CatalogRevision.objects.filter(pk=state.current_revision_id).first()
        if state.current_revision_id is not None
        else None
    )
    if latest is not None and latest.manifest_sha256 == manifest.sha256:
        return ImportResult(system=system, revision=latest, unchanged=True)

    config_changes = _config_changes(manifest, latest)
    existing = {t.declared_id: t for t in Tool.objects.filter(system=system)}
    seen: set[str] = set()
    new_tools: list[tuple[Descriptor, ChangeKind, dict[str, list[Any]]]] = []
    updates: list[tuple[Tool, Descriptor, dict[str, list[Any]]]] = []
    revived: list[tuple[Tool, Descriptor, dict[str, list[Any]]]] = []
    for descriptor in manifest.tools:
        seen.add(descriptor.declared_id)
        tool = existing.get(descriptor.declared_id)
        if tool is None:
            new_tools.append((descriptor, ChangeKind.ADDED, field_changes({}, descriptor.declared())))
            continue
        new_hash = descriptor.content_hash()
        if tool.retired_in_id is not None:
            revived.append((tool, descriptor, field_changes(_declared_of(tool), descriptor.declared())))
        elif tool.content_hash != new_hash:
            updates.append((tool, descriptor, field_changes(_declared_of(tool), descriptor.declared())))
    retiring = [t for t in existing.values() if t.declared_id not in seen and t.retired_in_id is None]

    ownership_changed = "ownership" in config_changes or "teams" in config_changes
    if not (new_tools or updates or revived or retiring or config_changes):
        return ImportResult(system=system, revision=latest, unchanged=True)

    # --- write: teams and ownership rules first (tools point at them) ---
    teams = _sync_teams(manifest)
    rules = _sync_ownership(manifest, teams)
    rule_index = {(r.plane, r.module): r for r in rules}

    revision = CatalogRevision.objects.create(
        system=system,
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
    )
    changes: list[ToolChange] = []
    result = ImportResult(system=system, revision=revision, unchanged=False, config_changes=config_changes)

    created = Tool.objects.bulk_create(
        [
            Tool(
                system=system,
                declared_id=d.declared_id,
                content_hash=d.content_hash(),
                first_revision=revision,
                last_changed_revision=revision,
                **d.declared(),
                **derived_fields(d, derive_owner(d.plane, d.module, rule_index)),
            )
            for d, _, _ in new_tools
        ]
    )
    for tool, (descriptor, kind, fields) in zip(created, new_tools, strict=True):
        changes.append(_change(revision, tool, kind, fields))
        result.added.append(descriptor.declared_id)

    touched: list[Tool] = []
    for tool, descriptor, fields in revived + updates:
        kind = ChangeKind.ADDED if tool.retired_in_id is not None else ChangeKind.CHANGED
        _apply(tool, descriptor, rule_index)
        tool.retired_in = None
        tool.last_changed_revision = revision
        touched.append(tool)
        changes.append(_change(revision, tool, kind, fields))
        (result.added if kind == ChangeKind.ADDED else result.changed).append(descriptor.declared_id)
    for tool in retiring:
        tool.retired_in = revision
        tool.last_changed_revision = revision
        touched.append(tool)
        changes.append(_change(revision, tool, ChangeKind.REMOVED, field_changes(_declared_of(tool), {})))
        result.removed.append(tool.declared_id)

    # Owners are derived: when the rules changed, re-derive for every live tool that kept its declaration.
    if ownership_changed:
        touched_ids = {t.pk for t in touched}
        by_id = {d.declared_id: d for d in manifest.tools}
        for tool in existing.values():
            if tool.pk in touched_ids or tool.declared_id not in by_id:
                continue
            rule = derive_owner(tool.plane, tool.module, rule_index)
            new_owner = (rule.team_id, rule.pk) if rule else (None, None)
            if (tool.owner_id, tool.owner_rule_id) != new_owner:
                tool.owner_id, tool.owner_rule_id = new_owner
                touched.append(tool)
    if touched:
        Tool.objects.bulk_update(
            touched,
            [
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
            ],
            batch_size=500,
        )
    ToolChange.objects.bulk_create(changes, batch_size=1000)
    if {"profiles", "forcedFloors", "agents"} & set(config_changes):
        _replace_config(manifest)

    live = Tool.objects.filter(system=system).live()
    revision.tool_count = live.count()
    revision.business_tool_count = live.filter(plane=Plane.BUSINESS.value).count()
    revision.added_count = len(result.added)
    revision.removed_count = len(result.removed)
    revision.changed_count = len(result.changed)
    result.safety_relevant = sorted(c.declared_id for c in changes if c.safety_relevant)
    revision.safety_change_count = len(result.safety_relevant)
    # A revision that changes no safety-relevant axis or section is approved by itself, and says so.
    safety_sections = sorted(set(SAFETY_RELEVANT_SECTIONS) & set(config_changes))
    if not result.safety_relevant and not safety_sections:
        revision.review_state = ReviewState.APPROVED.value
        revision.auto_approved = True
    revision.save()
    safety_ids = set(result.safety_relevant)
    Tool.objects.filter(system=system, declared_id__in=safety_ids).update(safety_revision=revision)

    # Findings are recomputed here, in the import transaction, so listing them is a plain query.
    team_slugs = {t.pk: t.slug for t in teams.values()}
    owners = {}
    for d in manifest.tools:
        rule = derive_owner(d.plane, d.module, rule_index)
        owners[d.declared_id] = team_slugs[rule.team_id] if rule else None
    tool_pks = {t.declared_id: t.pk for t in created}
    tool_pks.update({t.declared_id: t.pk for t in existing.values()})
    view = lint_view_from_manifest(manifest, owners, sibling_pairs_for(system))
    findings_store(view=view, revision=revision, tool_pks=tool_pks)

    state.current_revision = revision
    state.save(update_fields=["current_revision"])
    audit_record(
        actor=actor,
        action="catalog.revision.imported",
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
            "config_sections": sorted(config_changes),
            "review_state": revision.review_state,
        },
    )
    # New or changed embedded texts (and anything still missing a vector) go to the worker after commit.
    embeddings_enqueue(tools_needing_vectors(system=system))
    return result


def _declared_of(tool: Tool) -> dict[str, Any]:
    return {name: getattr(tool, name) for name in DECLARED_FIELDS}


def _apply(tool: Tool, descriptor: Descriptor, rule_index: dict[tuple[str, str], OwnershipRule]) -> None:
    for name, value in descriptor.declared().items():
        setattr(tool, name, value)
    tool.content_hash = descriptor.content_hash()
    for name, value in derived_fields(
        descriptor, derive_owner(descriptor.plane, descriptor.module, rule_index)
    ).items():
        setattr(tool, name, value)


def _change(revision: CatalogRevision, tool: Tool, kind: ChangeKind, fields: dict[str, list[Any]]) -> ToolChange:
    relevant = safety_fields(fields)
    return ToolChange(
        revision=revision,
        tool=tool,
        declared_id=tool.declared_id,
        kind=kind.value,
        fields=fields,
        safety_fields=relevant,
        safety_relevant=bool(relevant),
    )


# --- configuration sections (teams, ownership, profiles, floors, agents) ----------------------------


def _config_sections(manifest: Manifest) -> dict[str, Any]:
    """The manifest's configuration as plain, order-independent values for comparison."""
    return {
        "teams": sorted(
            ([t.id, t.name, t.oncall, t.channel, t.escalation] for t in manifest.teams), key=lambda x: x[0]
        ),
        "ownership": sorted([r.plane, r.module, r.team] for r in manifest.ownership),
        "profiles": sorted(
            ([p.id, p.clinical, sorted(p.availability), sorted(p.include)] for p in manifest.profiles),
            key=lambda x: str(x[0]),
        ),
        "forcedFloors": sorted(([f.id, f.trigger, f.tools] for f in manifest.forced_floors), key=lambda x: str(x[0])),
        "agents": sorted(([a.id, sorted(a.categories)] for a in manifest.agents), key=lambda x: str(x[0])),
        "baselineCount": manifest.baseline_count,
    }


def _stored_sections(system: str, manifest_team_ids: list[str]) -> dict[str, Any]:
    return {
        # Teams are shared: compare only the teams this manifest declares.
        "teams": sorted(
            [t.slug, t.name, t.oncall, t.channel, t.escalation] for t in Team.objects.filter(slug__in=manifest_team_ids)
        ),
        "ownership": sorted(
            [r.plane, r.module, r.team.slug] for r in OwnershipRule.objects.filter(system=system).select_related("team")
        ),
        "profiles": sorted(
            (
                [p.slug, p.clinical, sorted(p.availabilities), sorted(p.includes)]
                for p in CatalogProfile.objects.filter(system=system)
            ),
            key=lambda x: str(x[0]),
        ),
        "forcedFloors": sorted(
            ([f.slug, f.trigger, f.tool_ids] for f in ForcedFloor.objects.filter(system=system)),
            key=lambda x: str(x[0]),
        ),
        "agents": sorted(
            ([a.slug, sorted(a.categories)] for a in Agent.objects.filter(system=system)), key=lambda x: str(x[0])
        ),
    }


def _config_changes(manifest: Manifest, latest: CatalogRevision | None) -> dict[str, Any]:
    new = _config_sections(manifest)
    if latest is None:  # a system's first import declares every section
        old: dict[str, Any] = {k: ([] if k != "baselineCount" else None) for k in new}
    else:
        old = _stored_sections(manifest.system, [t.id for t in manifest.teams])
        old["baselineCount"] = latest.baseline_count
    return {k: {"old": old[k], "new": new[k]} for k in new if old[k] != new[k]}


def _sync_teams(manifest: Manifest) -> dict[str, Team]:
    teams = {t.slug: t for t in Team.objects.all()}
    for declared in manifest.teams:
        team = teams.get(declared.id)
        values = {
            "name": declared.name,
            "oncall": declared.oncall,
            "channel": declared.channel,
            "escalation": declared.escalation,
        }
        if team is None:
            teams[declared.id] = Team.objects.create(slug=declared.id, **values)
        elif any(getattr(team, k) != v for k, v in values.items()):
            for k, v in values.items():
                setattr(team, k, v)
            team.save()
    return teams


def _sync_ownership(manifest: Manifest, teams: dict[str, Team]) -> list[OwnershipRule]:
    """Upsert the system's rules by (plane, module) so unchanged rules keep their ids."""
    current = {(r.plane, r.module): r for r in OwnershipRule.objects.filter(system=manifest.system)}
    wanted = {(r.plane, r.module): r.team for r in manifest.ownership}
    stale = [r.pk for key, r in current.items() if key not in wanted]
    if stale:
        OwnershipRule.objects.filter(pk__in=stale).delete()
    rules: list[OwnershipRule] = []
    for key, team_slug in wanted.items():
        team = teams[team_slug]
        rule = current.get(key)
        if rule is None:
            rule = OwnershipRule.objects.create(system=manifest.system, plane=key[0], module=key[1], team=team)
        elif rule.team_id != team.pk:
            rule.team = team
            rule.save(update_fields=["team"])
        rules.append(rule)
    return rules


def _replace_config(manifest: Manifest) -> None:
    system = manifest.system
    CatalogProfile.objects.filter(system=system).delete()
    CatalogProfile.objects.bulk_create(
        CatalogProfile(system=system, slug=p.id, clinical=p.clinical, availabilities=p.availability, includes=p.include)
        for p in manifest.profiles
    )
    ForcedFloor.objects.filter(system=system).delete()
    ForcedFloor.objects.bulk_create(
        ForcedFloor(system=system, slug=f.id, trigger=f.trigger, tool_ids=f.tools) for f in manifest.forced_floors
    )
    Agent.objects.filter(system=system).delete()
    Agent.objects.bulk_create(Agent(system=system, slug=a.id, categories=a.categories) for a in manifest.agents)
