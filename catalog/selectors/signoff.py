"""Reads for reviewing a revision like a pull request: its changes with their strengthening / weakening class and
word-level diffs, the findings it added and cleared, what is in effect now and what sign-off would change, the
sign-off progress, and what the person looking may decide. A bounded number of queries, whatever the number of
changes (tests/catalog/selectors/test_signoff_preview.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from catalog.core.permissions import is_safety_officer
from catalog.domain.descriptor import DECLARED_FIELDS
from catalog.domain.effect import change_classes, needs_two_signoffs
from catalog.domain.rules import RULES
from catalog.domain.sections import SectionEntry, section_entries
from catalog.domain.vocabulary import SAFETY_RELEVANT_FIELDS, ChangeKind
from catalog.domain.worddiff import FieldDiff, field_diff
from catalog.models import CatalogRevision, Finding, RevisionReview, Tool, ToolChange
from catalog.selectors.effect import served_policy
from catalog.selectors.floors import tier_floors
from catalog.selectors.reviews import UNDECIDED, awaiting_tools, counted_approvals, signoffs_required


@dataclass(frozen=True)
class FieldChange:
    """One declared field's change, with its class (None: not governed, it takes effect at import)."""

    name: str
    klass: str | None
    diff: FieldDiff


@dataclass(frozen=True)
class ChangeView:
    change: ToolChange
    fields: list[FieldChange]  # a changed tool's fields; empty for a tool added or removed

    @property
    def klass(self) -> str | None:
        """The change as a whole: weakening if any field weakens (it waits for sign-off)."""
        classes = set(self.change.classes.values())
        return "weakening" if "weakening" in classes else next(iter(classes), None)


@dataclass(frozen=True)
class AwaitingTool:
    """A tool whose newest declaration waits: what is in effect for clinical profiles → what sign-off puts there."""

    declared_id: str
    in_effect_revision: int | None  # None: never signed off, it does not exist for a clinical profile yet
    fields: list[FieldChange]
    proposed_axes: list[tuple[str, Any]]  # a tool never signed off: its safety-relevant axes as declared
    two_signoffs: bool
    # What a clinical runtime is served, floors applied: the tier now and after sign-off, and the floors that hold
    # it after (None for a tool that does not mutate on either side, or was never signed off: nothing is served).
    served_tier: tuple[str | None, str | None] | None = None
    floors_after: tuple[str, ...] = ()

    @property
    def served_tier_changes(self) -> bool:
        return self.served_tier is not None and self.served_tier[0] != self.served_tier[1]


@dataclass(frozen=True)
class SignoffPreview:
    """What approving a system's newest undecided revision would put in effect, and how far its sign-off is."""

    revision: CatalogRevision
    tools: list[AwaitingTool]
    approvals: list[str]  # usernames of the approvals that count, oldest first
    required: int

    @property
    def two_signoff_tools(self) -> list[str]:
        return [t.declared_id for t in self.tools if t.two_signoffs]


@dataclass(frozen=True)
class FindingRef:
    rule: str
    declared_id: str | None  # None: a catalog-wide finding
    severity: str
    title: str
    message: str = ""  # the finding as it stands now; "" when it no longer stands (or was cleared)
    text: dict[str, Any] = field(default_factory=dict)  # the message to translate (catalog.domain.messages)


@dataclass(frozen=True)
class RevisionPage:
    revision: CatalogRevision
    changes: list[ChangeView]
    reviews: list[RevisionReview]
    counted: set[int]  # the pks of the reviews whose approval counts
    approvals: list[str]
    required: int
    findings_added: list[FindingRef]
    findings_cleared: list[FindingRef]
    preview: SignoffPreview | None  # when this revision is its system's newest undecided one
    newer: CatalogRevision | None  # the newest undecided revision, when it is newer than this one
    safety_changes: list[ChangeView] = field(default_factory=list)

    @property
    def section_changes(self) -> list[tuple[str, list[SectionEntry], dict[str, Any]]]:
        """Each configuration section the revision changed: its entries, classed, and its values before and after."""
        changed = self.revision.config_changes or {}
        return [(name, section_entries(name, v.get("old"), v.get("new")), v) for name, v in changed.items()]

    @property
    def undecided(self) -> bool:
        return self.revision.review_state in UNDECIDED

    @property
    def remaining(self) -> int:
        """Approvals still needed (0 once decided)."""
        return max(self.required - len(self.approvals), 0) if self.undecided else 0


@dataclass(frozen=True)
class DecisionState:
    """What the person looking may decide on this revision, and why not (the sign-off service's rules; it is
    the service that refuses a POST, this only spares a reviewer the refused click)."""

    form: bool  # the decision form is shown (request changes at least)
    may_approve: bool
    reason: str  # "", "importer", "not-officer", "decided", "already-approved", "not-newest"


def field_changes(
    old: Mapping[str, Any] | None, new: Mapping[str, Any], classes: Mapping[str, str], names: Iterable[str]
) -> list[FieldChange]:
    """The fields among `names` whose value differs, each with its class and diff."""
    before = old or {}
    return [
        FieldChange(name, classes.get(name), field_diff(before.get(name), new.get(name)))
        for name in names
        if before.get(name) != new.get(name)
    ]


def _change_view(change: ToolChange) -> ChangeView:
    if change.kind != ChangeKind.CHANGED:
        return ChangeView(change, [])
    fields = [
        FieldChange(name, change.classes.get(name), field_diff(pair[0], pair[1]))
        for name, pair in change.fields.items()
    ]
    return ChangeView(change, fields)


def _newest_undecided(system: str) -> CatalogRevision | None:
    return (
        CatalogRevision.objects.filter(system=system, review_state__in=UNDECIDED)
        .select_related("imported_by")
        .order_by("-number")
        .first()
    )


def _served_tiers(
    row: Mapping[str, Any], in_effect: Mapping[str, Any] | None, declared: Mapping[str, Any], floors: Any
) -> tuple[tuple[str | None, str | None] | None, tuple[str, ...]]:
    """The tier a clinical runtime is served now and after sign-off, as the gate and the policy API compute it."""
    if in_effect is None:
        return None, ()
    now = served_policy(row, in_effect, floors, proposed=declared)
    after = served_policy(row, declared, floors)
    if now["effective_policy_class"] != "mutate" and after["effective_policy_class"] != "mutate":
        return None, ()
    return (now["hitl_tier"], after["hitl_tier"]), after["floors"]


def _awaiting(row: dict[str, Any], floors: Any) -> AwaitingTool:
    in_effect = row["in_effect"]
    declared = {name: row[name] for name in DECLARED_FIELDS}
    axes = [] if in_effect is not None else [(name, declared[name]) for name in SAFETY_RELEVANT_FIELDS]
    served, floors_after = _served_tiers(row, in_effect, declared, floors)
    return AwaitingTool(
        declared_id=row["declared_id"],
        in_effect_revision=row["in_effect_revision__number"] if in_effect is not None else None,
        fields=field_changes(in_effect, declared, change_classes(in_effect, declared), DECLARED_FIELDS)
        if in_effect is not None
        else [],
        proposed_axes=axes,
        two_signoffs=needs_two_signoffs(in_effect, declared),
        served_tier=served,
        floors_after=floors_after,
    )


def _counted_usernames(revision: CatalogRevision) -> dict[int, str]:
    """The counted approvals' review pk → reviewer, the sign-off service's own count (one reviewer once)."""
    rows = counted_approvals(revision).order_by("created_at").values_list("pk", "reviewer_id", "reviewer__username")
    seen: set[int] = set()
    counted: dict[int, str] = {}
    for pk, reviewer_id, username in rows:
        if reviewer_id not in seen:
            seen.add(reviewer_id)
            counted[pk] = username
    return counted


def preview_of(revision: CatalogRevision, counted: dict[int, str] | None = None) -> SignoffPreview:
    """What approving `revision` (its system's newest undecided one) would put in effect, and the tier a clinical
    runtime is served before and after, floors applied: six queries (four when its counted approvals are passed in;
    the floors' rows are read only when another process changed them)."""
    rows = (
        awaiting_tools(revision.system)
        .order_by("declared_id")
        .values("system", "declared_id", "canonical_key", "in_effect", "in_effect_revision__number", *DECLARED_FIELDS)
    )
    floors = tier_floors()
    tools = [_awaiting(row, floors) for row in rows]
    approvals = list((counted if counted is not None else _counted_usernames(revision)).values())
    return SignoffPreview(revision, tools, approvals, signoffs_required(revision))


def signoff_preview(system: str) -> SignoffPreview | None:
    """For the system's newest undecided revision: each awaiting tool with the field-level diff in effect →
    newest declaration, its classes and whether it needs two sign-offs; the approvals so far and the number
    required. None when nothing waits for a decision."""
    revision = _newest_undecided(system)
    return preview_of(revision) if revision is not None else None


def _finding_refs(revision: CatalogRevision) -> tuple[list[FindingRef], list[FindingRef]]:
    """The findings this import added and cleared, with the added ones' message as it stands now (one query)."""
    added = [(rule, declared_id) for rule, declared_id in revision.findings_added]
    messages: dict[tuple[str, str | None], tuple[str, dict[str, Any]]] = {}
    if added:
        now = Finding.objects.filter(
            Q(tool__declared_id__in={d for _, d in added if d}) | Q(tool__isnull=True),
            system=revision.system,
            rule__in={rule for rule, _ in added},
        ).values_list("rule", "tool__declared_id", "message", "text")
        messages = {(rule, declared_id): (message, text) for rule, declared_id, message, text in now}

    def ref(rule: str, declared_id: str | None, message: tuple[str, dict[str, Any]] = ("", {})) -> FindingRef:
        known = RULES.get(rule)
        severity, title = (known.severity.value, known.title) if known else ("warning", rule)
        return FindingRef(rule, declared_id, severity, title, *message)

    cleared = [ref(rule, declared_id) for rule, declared_id in revision.findings_cleared]
    return [ref(rule, d, messages.get((rule, d), ("", {}))) for rule, d in added], cleared


def revision_detail(system: str, number: int) -> RevisionPage:
    """Everything the revision page shows, in at most eleven queries whatever the number of changes.
    Raises CatalogRevision.DoesNotExist."""
    revision = CatalogRevision.objects.select_related("imported_by", "superseded_by").get(system=system, number=number)
    changes = [_change_view(c) for c in revision.changes.order_by("-weakening", "-safety_relevant", "declared_id")]
    reviews = list(revision.reviews.select_related("reviewer").order_by("created_at"))
    counted = _counted_usernames(revision)
    newest = _newest_undecided(system) if revision.review_state in UNDECIDED else None
    preview = preview_of(revision, counted) if newest is not None and newest.pk == revision.pk else None
    added, cleared = _finding_refs(revision)
    return RevisionPage(
        revision=revision,
        changes=changes,
        reviews=reviews,
        counted=set(counted),
        approvals=list(counted.values()),
        required=preview.required if preview else revision.signoffs_required,
        findings_added=added,
        findings_cleared=cleared,
        preview=preview,
        newer=newest if newest is not None and newest.pk != revision.pk else None,
        safety_changes=[c for c in changes if c.change.safety_relevant],
    )


def decision_state(page: RevisionPage, user: Any) -> DecisionState:
    """Whether `user` sees the decision form and the approve button on `page`, and the reason when not."""
    revision = page.revision
    if revision.imported_by_id is not None and revision.imported_by_id == user.pk:
        return DecisionState(form=False, may_approve=False, reason="importer")
    if not is_safety_officer(user):
        return DecisionState(form=False, may_approve=False, reason="not-officer")
    if not page.undecided:
        return DecisionState(form=False, may_approve=False, reason="decided")
    if any(r.reviewer_id == user.pk for r in page.reviews if r.pk in page.counted):
        return DecisionState(form=True, may_approve=False, reason="already-approved")
    if page.newer is not None:
        return DecisionState(form=True, may_approve=False, reason="not-newest")
    return DecisionState(form=True, may_approve=True, reason="")


@dataclass(frozen=True)
class InEffectNotice:
    """A tool whose newest declaration waits for sign-off: what clinical profiles are served instead."""

    never_signed_off: bool
    in_effect_revision: int | None
    fields: list[FieldChange]  # in effect → newest declaration
    revision: CatalogRevision | None  # the revision whose sign-off would put the newest declaration in effect


def tool_in_effect(tool: Tool) -> InEffectNotice | None:
    """For the tool page: None unless the tool awaits sign-off; then what is in effect against what is declared
    (two queries)."""
    if not tool.awaiting_signoff:
        return None
    declared = tool.declared()
    in_effect = tool.in_effect
    number = (
        CatalogRevision.objects.filter(pk=tool.in_effect_revision_id).values_list("number", flat=True).first()
        if tool.in_effect_revision_id
        else None
    )
    fields = (
        field_changes(in_effect, declared, change_classes(in_effect, declared), DECLARED_FIELDS)
        if in_effect is not None
        else []
    )
    return InEffectNotice(in_effect is None, number, fields, _newest_undecided(tool.system))
