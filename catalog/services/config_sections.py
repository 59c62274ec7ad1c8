"""The configuration sections of a system an import compares and replaces: teams, ownership rules, profiles,
forced floors, agents (and the baseline count, compared only). Runs inside the import's transaction."""

from __future__ import annotations

from typing import Any

from catalog.domain.manifest import Manifest
from catalog.models import Agent, CatalogProfile, CatalogRevision, ForcedFloor, OwnershipRule, Team


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
    """The stored configuration of a system, in the same plain shape as `_config_sections`."""
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


def config_changes_since(manifest: Manifest, latest: CatalogRevision | None) -> dict[str, Any]:
    """{section: {"old", "new"}} for every configuration section the manifest changes against what is stored
    (`latest`: the system's current revision, None before its first import)."""
    new = _config_sections(manifest)
    if latest is None:  # a system's first import declares every section
        old: dict[str, Any] = {k: ([] if k != "baselineCount" else None) for k in new}
    else:
        old = _stored_sections(manifest.system, [t.id for t in manifest.teams])
        old["baselineCount"] = latest.baseline_count
    return {k: {"old": old[k], "new": new[k]} for k in new if old[k] != new[k]}


def teams_sync(manifest: Manifest) -> dict[str, Team]:
    """Create or update the declared teams by id (teams are shared: never deleted). Returns every team by slug."""
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


def ownership_sync(manifest: Manifest, teams: dict[str, Team]) -> list[OwnershipRule]:
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


def config_replace(manifest: Manifest) -> None:
    """Replace the system's profiles, forced floors and agents with the manifest's."""
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
