"""Recomputing and storing findings: the rules engine applied to one system's live catalog."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet

from catalog.domain import rules
from catalog.domain.manifest import Agent as AgentSpec
from catalog.domain.manifest import ForcedFloor as FloorSpec
from catalog.domain.manifest import Manifest
from catalog.domain.manifest import Profile as ProfileSpec
from catalog.domain.rules.scope import lint_fingerprint
from catalog.domain.vocabulary import MCP_SYSTEM_PREFIX, mcp_server_of
from catalog.models import Agent, CatalogProfile, CatalogRevision, CatalogState, Finding, ForcedFloor, Tool
from catalog.rag.selectors.siblings import sibling_pairs_for
from catalog.selectors.floors import tier_floors
from catalog.services.finding_counts import finding_counts_refresh


def lint_view_from_manifest(
    manifest: Manifest, owners: Mapping[str, str | None], sibling_pairs: list[tuple[str, str, float]] | None = None
) -> rules.LintCatalog:
    """The view of a catalog as a manifest declares it (owners derived by the caller; sibling pairs from the
    vectors that still match their tool's text)."""
    return rules.LintCatalog(
        system=manifest.system,
        tools=[rules.LintTool(d, owners.get(d.declared_id)) for d in manifest.tools],
        profiles=_all_profiles(manifest),
        forced_floors=manifest.forced_floors,
        agents=manifest.agents,
        baseline_count=manifest.baseline_count,
        sibling_pairs=sibling_pairs or [],
        tier_floors=tier_floors(),
        foreign_names=foreign_names(manifest.system),
    )


def foreign_names(system: str) -> tuple[tuple[str, str], ...]:
    """For an MCP server's catalog: every spelling of every live tool of the other systems (what its tools may
    shadow), one query. Condor and TUCAN catalogs need none (their rules compare within the catalog)."""
    if mcp_server_of(system) is None:
        return ()
    names: list[tuple[str, str]] = []
    rows = Tool.objects.live().exclude(system=system).values_list("system", "declared_id", "llm_name", "aliases")
    for other, declared_id, llm, aliases in rows:
        names.extend((other, name) for name in {declared_id, llm, *(aliases or [])})
    return tuple(names)


def _all_profiles(manifest: Manifest) -> list[ProfileSpec]:
    # Profiles are global: a manifest's own profiles replace those it declared before; others still apply.
    others = [
        ProfileSpec(p.slug, p.clinical, p.availabilities, p.includes)
        for p in CatalogProfile.objects.exclude(system=manifest.system)
    ]
    return list(manifest.profiles) + others


def lint_view_from_db(system: str) -> rules.LintCatalog:
    """The stored live catalog of a system: six queries whatever its size."""
    tools = Tool.objects.filter(system=system).live().select_related("owner").order_by("declared_id")
    state = CatalogState.objects.select_related("current_revision").filter(system=system).first()
    revision = state.current_revision if state else None
    return rules.LintCatalog(
        system=system,
        tools=[rules.LintTool(t.descriptor(), t.owner.slug if t.owner else None) for t in tools],
        profiles=[ProfileSpec(p.slug, p.clinical, p.availabilities, p.includes) for p in CatalogProfile.objects.all()],
        forced_floors=[FloorSpec(f.slug, f.trigger, f.tool_ids) for f in ForcedFloor.objects.filter(system=system)],
        agents=[AgentSpec(a.slug, a.categories) for a in Agent.objects.filter(system=system)],
        baseline_count=revision.baseline_count if revision else None,
        sibling_pairs=sibling_pairs_for(system),
        tier_floors=tier_floors(),
        foreign_names=foreign_names(system),
    )


def findings_store(
    *,
    view: rules.LintCatalog,
    revision: CatalogRevision,
    tool_pks: Mapping[str, int],
    only: Sequence[str] | None = None,
    record_on: CatalogRevision | None = None,
) -> int:
    """Bring the system's stored findings to the lint of `view` (of the rules in `only`, when given: their
    findings are replaced, the others kept). Runs inside the transaction that changed what it lints.
    `record_on`: the revision being imported, which keeps the findings it added and cleared (for its review).

    A diff writer: a finding that is still found is kept as it is (its `revision` is the one that first found it),
    gone ones are deleted and new ones inserted, and only the tools whose findings changed are recounted. A
    10-tool change to a 50,000-tool catalog so writes what changed, not every finding of the system again.
    With `view.only_tools` (an import that re-lints only the tools it changed, catalog.domain.rules.scope) the local
    rules' findings of the other tools are kept unread; the count returned is then of the lint that ran."""
    found = rules.lint(view, only=only)
    replaced = _replaced(view, list(only or rules.declaration_rules()))
    stored = list(
        replaced.values_list("pk", "rule", "tool_id", "tool__declared_id", "severity", "message", "details", "text")
    )
    if record_on is not None:
        _record_delta(record_on, {(row[1], row[3]) for row in stored}, found)
    kept: dict[tuple[Any, ...], int] = {}
    gone: list[int] = []
    for pk, rule, tool_pk, _, severity, message, details, text in stored:
        key = _finding_key(rule, tool_pk, severity, message, details, text)
        if key in kept:
            gone.append(pk)  # a duplicate row (none is written, but never keep two)
        else:
            kept[key] = pk
    new: list[Finding] = []
    wanted: set[tuple[Any, ...]] = set()
    for f in found:
        found_pk = tool_pks[f.tool_id] if f.tool_id else None
        key = _finding_key(f.rule, found_pk, f.severity, f.message, f.details, f.text)
        if key in wanted:
            continue
        wanted.add(key)
        if key not in kept:
            new.append(finding_row(view.system, found_pk, f, revision))
    gone += [pk for key, pk in kept.items() if key not in wanted]
    changed_tools = {key[1] for key in kept if key not in wanted} | {f.tool_id for f in new}
    for start in range(0, len(gone), _DELETE_CHUNK):
        Finding.objects.filter(pk__in=gone[start : start + _DELETE_CHUNK]).delete()
    Finding.objects.bulk_create(new, batch_size=1000)
    finding_counts_refresh(changed_tools)
    return len(found)


_DELETE_CHUNK = 2000  # finding pks per DELETE: a bounded IN list on every backend


def _replaced(view: rules.LintCatalog, rule_ids: list[str]) -> QuerySet[Finding]:
    """The stored findings the lint of `view` replaces: those of `rule_ids` (the runtime rules' findings are
    evidence of what ran, catalog.usage: no re-lint of declarations replaces them); with `view.only_tools`, the
    local rules' findings of those tools only (the others' are kept as they are)."""
    replaced = Finding.objects.filter(system=view.system)
    if view.only_tools is None:
        return replaced.filter(rule__in=rule_ids)
    local = set(rules.local_rules())
    return replaced.filter(
        Q(rule__in=[r for r in rule_ids if r not in local])
        | Q(rule__in=[r for r in rule_ids if r in local], tool__declared_id__in=sorted(view.only_tools))
    )


def _finding_key(
    rule: str, tool_pk: int | None, severity: str, message: str, details: Any, text: Any
) -> tuple[Any, ...]:
    """What makes two findings the same: everything the rule says (JSON compared canonically)."""
    return (rule, tool_pk, severity, message, json.dumps(details, sort_keys=True), json.dumps(text, sort_keys=True))


def finding_row(system: str, tool_pk: int | None, f: rules.Finding, revision: CatalogRevision) -> Finding:
    return Finding(
        system=system,
        tool_id=tool_pk,
        rule=f.rule,
        severity=f.severity,
        message=f.message,
        details=f.details,
        text=f.text,
        revision=revision,
    )


def _record_delta(revision: CatalogRevision, before: set[tuple[str, str | None]], found: list[rules.Finding]) -> None:
    """Which (rule, tool) findings the revision added and which it cleared, sorted; saved with the revision."""
    after = {(f.rule, f.tool_id or None) for f in found}
    revision.findings_added = sorted([rule, tool] for rule, tool in after - before)
    revision.findings_cleared = sorted([rule, tool] for rule, tool in before - after)
    revision.save(update_fields=["findings_added", "findings_cleared"])


def findings_recompute(system: str) -> int:
    """Re-lint the stored catalog (after a rule was added or changed) and store the result."""
    state = CatalogState.objects.select_related("current_revision").filter(system=system).first()
    if state is None or state.current_revision is None:
        return 0
    view = lint_view_from_db(system)
    pks = dict(Tool.objects.filter(system=system).live().values_list("declared_id", "pk"))
    count = findings_store(view=view, revision=state.current_revision, tool_pks=pks)
    # Every declaration rule's findings are now this code's: the next import may keep those of unchanged tools.
    CatalogRevision.objects.filter(pk=state.current_revision.pk).update(lint_fingerprint=lint_fingerprint())
    return count


# The rules that read other catalogs' names (`LintCatalog.foreign_names`): what an MCP tool may shadow.
FOREIGN_NAME_RULES = ("mcp-shadowing", "llm-text-manipulation")


def foreign_findings_refresh(changed_system: str) -> list[str]:
    """After an import of `changed_system` committed: refresh the foreign-name findings of every other MCP
    catalog, so that a collision is found on both tools whichever was imported first (the newcomer's import
    finds it on its own tools; this finds it on the other's). Each catalog under its own import lock, in a
    transaction of its own (taking a second system's lock inside an import could deadlock with that system's
    import doing the same). Returns the systems refreshed."""
    others = list(
        CatalogState.objects.filter(system__startswith=MCP_SYSTEM_PREFIX, current_revision__isnull=False)
        .exclude(system=changed_system)
        .order_by("system")
        .values_list("system", flat=True)
    )
    for system in others:
        with transaction.atomic():
            state = CatalogState.objects.select_for_update().filter(system=system).first()
            if state is None or state.current_revision is None:
                continue
            pks = dict(Tool.objects.filter(system=system).live().values_list("declared_id", "pk"))
            findings_store(
                view=lint_view_from_db(system), revision=state.current_revision, tool_pks=pks, only=FOREIGN_NAME_RULES
            )
    return others
