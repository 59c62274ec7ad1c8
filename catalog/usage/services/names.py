"""An owner's verdict on a name the runtime called that is no catalog tool: "should be an alias of X" (advice for the
source manifest: the catalog itself changes only by import), "ignore", or open again. One transaction with its
audit event."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from catalog.core import roles
from catalog.core.audit import Actor, AuditAction, audit_record
from catalog.core.permissions import has_role
from catalog.models import Tool, UnknownToolName
from catalog.selectors.owners import owner_lookup

OBJECT_TYPE = "usage.unknown_name"
VERDICTS = ("alias", "ignore", "open")
JUDGES = (roles.ON_CALL, roles.CATALOG_ADMIN)
TOOL_REF_MAX = 260  # "mcp:<server>:<declared id>" at most


class VerdictRefused(Exception):
    """A refused verdict: `problems` by form field ("" for the whole verdict); `forbidden` for a role, `missing`
    for a name that is no longer on the board."""

    def __init__(self, problems: dict[str, str], *, forbidden: bool = False, missing: bool = False) -> None:
        super().__init__("; ".join(f"{k}: {v}" if k else v for k, v in problems.items()))
        self.problems = problems
        self.message = str(self)
        self.forbidden = forbidden
        self.missing = missing


def may_judge(user: Any) -> bool:
    return any(has_role(user, role) for role in JUDGES)


def audit_state(row: UnknownToolName) -> dict[str, Any]:
    tool = row.alias_of
    return {
        "name": row.name,
        "source": row.source,
        "verdict": row.verdict or "open",
        "alias_of": f"{tool.system}:{tool.declared_id}" if tool is not None else None,
    }


def alias_target(text: str) -> Tool:
    """The live tool `text` names: `system:declared id`, or any spelling the owner lookup knows of exactly one
    tool. Raises VerdictRefused naming the field `alias_of`."""
    text = (text or "").strip()
    if not text:
        raise VerdictRefused({"alias_of": _("name the tool it should be an alias of")})
    if len(text) > TOOL_REF_MAX:
        raise VerdictRefused({"alias_of": _("at most %(n)d characters") % {"n": TOOL_REF_MAX}})
    system, _colon, declared_id = text.rpartition(":")
    if system:
        tool = Tool.objects.live().select_related("owner").filter(system=system, declared_id=declared_id).first()
        if tool is None:
            problem = _("no live tool %(id)s in the catalog %(system)s") % {"id": declared_id, "system": system}
            raise VerdictRefused({"alias_of": problem})
        return tool
    found = owner_lookup(text)
    tools = list({t.pk: t for t, _how in found.matches}.values())
    if len(tools) == 1:
        return tools[0]
    if tools:
        names = ", ".join(sorted(f"{t.system}:{t.declared_id}" for t in tools))
        problem = _("%(text)s names several live tools (%(tools)s): type system:id") % {"text": text, "tools": names}
        raise VerdictRefused({"alias_of": problem})
    near = ", ".join(f"{t.system}:{t.declared_id}" for t, _score in found.candidates[:3])
    if near:
        problem = _("no live tool is called %(text)s; did you mean %(tools)s?") % {"text": text, "tools": near}
    else:
        problem = _("no live tool is called %(text)s") % {"text": text}
    raise VerdictRefused({"alias_of": problem})


def unknown_name_verdict(*, name_id: int, verdict: str, alias_of: str = "", by: Any) -> UnknownToolName:
    """Mark a name an alias of a live tool, ignore it, or reopen it (`open`). Only on-call engineers and catalog
    admins judge names."""
    if not may_judge(by):
        raise VerdictRefused({"": _("only an on-call engineer or a catalog admin may judge a name")}, forbidden=True)
    if verdict not in VERDICTS:
        raise VerdictRefused({"verdict": _("expected one of %(verdicts)s") % {"verdicts": ", ".join(VERDICTS)}})
    target = alias_target(alias_of) if verdict == "alias" else None
    with transaction.atomic():
        row = UnknownToolName.objects.select_for_update().filter(pk=name_id).first()
        if row is None:
            problem = _("no unknown name %(id)s: it may have been removed meanwhile") % {"id": name_id}
            raise VerdictRefused({"": problem}, missing=True)
        before = audit_state(row)
        row.verdict = UnknownToolName.Verdict.OPEN if verdict == "open" else verdict
        row.alias_of = target
        row.verdict_by = by
        row.verdict_at = timezone.now()
        row.save(update_fields=["verdict", "alias_of", "verdict_by", "verdict_at"])
        audit_record(
            actor=Actor.for_user(by),
            action=AuditAction.USAGE_UNKNOWN_NAME_JUDGED,
            object_type=OBJECT_TYPE,
            object_id=row.pk,
            before=before,
            after=audit_state(row),
        )
    return row
