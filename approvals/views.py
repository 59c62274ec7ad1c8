"""Approvers' pages: the live queue, one request, the decision, bulk approval (tier low only), history."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, time
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from approvals.access import page
from approvals.display import ArgRow, readable_args, short_id
from approvals.domain import State
from approvals.forms import (
    ArgsEditForm,
    BulkApproveForm,
    DecisionForm,
    HistoryFilterForm,
    focus_first_error,
    queue_decision_form,
)
from approvals.models import TIER_KEYS, ApprovalRequest
from approvals.selectors import (
    history_list,
    is_own_request,
    may_decide,
    may_decide_some,
    may_read_all,
    may_view,
    pending_all,
    pending_count_all,
    queue_for,
    request_context,
    request_get,
)
from approvals.services import OBJECT_TYPE, ApprovalRefused, approval_decide
from catalog.core.http import HtmxHttpRequest
from catalog.models import AuditEvent

# The list re-renders at least this often even when nothing changed, so "time left" stays honest.
QUEUE_REFRESH_SECONDS = 30


@dataclass
class QueueItem:
    req: ApprovalRequest
    args: list[ArgRow]
    own: bool
    patient: str
    form: DecisionForm | None = None  # None: the person may read this request but not decide it
    outcome: str = ""  # after a decision from the list: what happened
    outcome_kind: str = ""  # "ok", "info" (someone else was first) or "error"


def _item(user: Any, req: ApprovalRequest, outcome: str = "", kind: str = "", data: Any = None) -> QueueItem:
    deciding = may_decide(user, req)
    return QueueItem(
        req=req,
        args=readable_args(req.proposed_args, req.tool.input_schema),
        own=is_own_request(user, req),
        patient=short_id(req.patient_ref),
        form=focus_first_error(queue_decision_form(req.pk, data)) if deciding else None,
        outcome=outcome,
        outcome_kind=kind,
    )


def _fingerprint(items: list[QueueItem], now: datetime) -> str:
    parts = [f"{i.req.pk}:{i.req.escalated_to}" for i in items] + [str(int(now.timestamp()) // QUEUE_REFRESH_SECONDS)]
    return hashlib.sha1("|".join(parts).encode(), usedforsecurity=False).hexdigest()[:16]


def _queue_context(request: HttpRequest, now: datetime) -> dict[str, Any]:
    """The person's queue, or (`?all=1`, for those who may read every domain) every pending request."""
    reads_all = may_read_all(request.user)
    show_all = reads_all and request.GET.get("all") == "1"
    mine = queue_for(request.user, now=now)
    shown = pending_all(now=now) if show_all else mine
    items = [_item(request.user, r) for r in shown]
    tiers = dict.fromkeys(TIER_KEYS, 0)
    for item in items:
        tiers[item.req.tier_key] += 1
    return {
        "items": items,
        "fingerprint": _fingerprint(items, now),
        "now": now,
        "tiers": tiers,
        "mine": len(mine),
        "show_all": show_all,
        "all_pending": (len(items) if show_all else pending_count_all(now=now)) if reads_all else None,
    }


def _queue_render(request: HtmxHttpRequest, bulk: BulkApproveForm | None = None, status: int = 200) -> HttpResponse:
    context = _queue_context(request, timezone.now())
    if may_decide_some(request.user):
        context["bulk"] = focus_first_error(bulk) if bulk is not None else BulkApproveForm()
    template = "approvals/queue.html#queue" if request.htmx else "approvals/queue.html"
    return render(request, template, context, status=status)


@page("approvals:queue")
def queue_page(request: HtmxHttpRequest) -> HttpResponse:
    # The poll asks "anything new since <fingerprint>?": an unchanged queue answers 204 and htmx swaps nothing,
    # so a reason being typed is not wiped every few seconds.
    if request.htmx and request.GET.get("since"):
        context = _queue_context(request, timezone.now())
        if request.GET["since"] == context["fingerprint"]:
            return HttpResponse(status=204)
        return render(request, "approvals/queue.html#queue", context)
    return _queue_render(request)


def _visible_request(request: HttpRequest, request_id: str, *, detail: bool = False) -> ApprovalRequest:
    """404 to people who may neither decide nor review this request: they do not learn it exists."""
    req = request_get(request_id, detail=detail)
    if req is None or not may_view(request.user, req):
        raise Http404("no such approval request for you")
    return req


def _request_render(
    request: HttpRequest,
    req: ApprovalRequest,
    *,
    decide: DecisionForm | None = None,
    edit: ArgsEditForm | None = None,
    edit_reason: DecisionForm | None = None,
    status: int = 200,
) -> HttpResponse:
    """The request page; after a refused decision, with the refused forms (input kept, errors beside it)."""
    schema = req.tool.input_schema or {}
    pending = req.current_state == State.PENDING
    own = is_own_request(request.user, req)
    deciding = pending and may_decide(request.user, req) and not own
    events = AuditEvent.objects.filter(object_type=OBJECT_TYPE, object_id=str(req.pk)).order_by("pk")
    context = {
        "req": req,
        "proposed": readable_args(req.proposed_args, schema),
        "approved": readable_args(req.approved_args, schema, compare_to=req.proposed_args)
        if req.approved_args is not None
        else None,
        "may_decide": deciding,
        "read_only": pending and not deciding and not own,
        "own": own,
        "decide_form": focus_first_error(decide or DecisionForm()),
        "edit_form": focus_first_error(edit or ArgsEditForm(schema=schema, proposed=req.proposed_args))
        if deciding and schema
        else None,
        "edit_reason_form": focus_first_error(edit_reason or DecisionForm(auto_id="id_edit_%s")),
        "events": events,
        "ctx": request_context(request.user, req),
    }
    return render(request, "approvals/request.html", context, status=status)


@page("approvals:detail")
def request_page(request: HttpRequest, request_id: str) -> HttpResponse:
    return _request_render(request, _visible_request(request, request_id, detail=True))


@require_POST
@page("approvals:decide")
def decide_view(request: HtmxHttpRequest, request_id: str) -> HttpResponse:
    req = _visible_request(request, request_id, detail=not request.htmx)
    outcome = _decide(request, req)
    if request.htmx:
        if outcome.form is not None:  # refused input: the card again, the error beside the reason
            item = _item(request.user, req, data=request.POST)
        else:
            item = _item(request.user, outcome.req, outcome.text, outcome.kind)
            item.form = None
        return render(request, "approvals/queue.html#row", {"item": item, "now": timezone.now()})
    if outcome.forbidden:
        raise PermissionDenied(outcome.text)
    if outcome.form is not None or outcome.edit is not None:
        # Rendered, not redirected: what was typed stays in the fields, each error beside its field. 400, as the
        # console's other refused forms answer (a client error; tests/test_access_matrix.py holds every POST to it).
        editing = bool(request.POST.get("edit"))
        return _request_render(
            request,
            req,
            decide=None if editing else outcome.form,
            edit=outcome.edit,
            edit_reason=outcome.form if editing else None,
            status=400,
        )
    notice = {"ok": messages.success, "info": messages.info, "error": messages.error}[outcome.kind]
    notice(request, f"{outcome.req.tool_declared_id}: {outcome.text}")
    if outcome.kind == "error" or request.POST.get("from") == "detail":
        return redirect("approvals:detail", request_id=outcome.req.pk)
    return redirect("approvals:queue")


@dataclass
class Outcome:
    req: ApprovalRequest
    text: str
    kind: str = "ok"  # "ok", "info" (someone else was first, or it expired) or "error"
    forbidden: bool = False
    form: DecisionForm | None = None  # the decision form, when its input was refused
    edit: ArgsEditForm | None = None  # the edited arguments, when they were refused


def _decide(request: HttpRequest, req: ApprovalRequest) -> Outcome:
    """Validate the posted decision (and edited arguments), then call the one service that decides."""
    editing = bool(request.POST.get("edit"))
    form = DecisionForm(request.POST, auto_id="id_edit_%s" if editing else "id_%s")
    edit = None
    if editing:
        edit = ArgsEditForm(request.POST, schema=req.tool.input_schema or {}, proposed=req.proposed_args)
        edit_ok, form_ok = edit.is_valid(), form.is_valid()  # both: every error shows at once
        if not (edit_ok and form_ok):
            return Outcome(req, _("Check the fields marked below."), "error", form=form, edit=edit)
    elif not form.is_valid():
        return Outcome(req, _("Check the fields marked below."), "error", form=form)
    approved_args = edit.edited_args() if edit is not None and form.cleaned_data["decision"] == "approve" else None
    try:
        req = approval_decide(
            request_id=req.pk,
            approver=request.user,
            decision=form.cleaned_data["decision"],
            reason=form.cleaned_data["reason"],
            approved_args=approved_args,
            loaded=req,
        )
    except ApprovalRefused as exc:
        if exc.code == "invalid-args" and edit is not None:
            _schema_errors_to_fields(edit, exc)
            return Outcome(req, exc.message, "error", form=form, edit=edit)
        text = exc.message + ("; " + "; ".join(exc.errors) if exc.errors else "")
        # Someone else deciding first is news, not a failure.
        kind = "info" if exc.code in ("already-decided", "expired", "cancelled") else "error"
        return Outcome(exc.request or req, text, kind, forbidden=exc.forbidden)
    at = f"{timezone.localtime(req.decided_at):%H:%M:%S}"
    if req.state == State.APPROVED:
        text = _("approved with your changes by you at %(at)s") if req.args_edited else _("approved by you at %(at)s")
    else:
        text = _("rejected by you at %(at)s")
    return Outcome(req, text % {"at": at})


def _schema_errors_to_fields(edit: ArgsEditForm, exc: ApprovalRefused) -> None:
    """The schema's `args.pzn: '123' does not match …` beside the pzn field; the rest above the fields."""
    placed = False
    for error in exc.errors:
        key, _sep, message = error.partition(": ")
        name = key.removeprefix("args.").split(".")[0].split("[")[0]
        if key.startswith("args.") and name in edit.fields and name not in edit.errors:
            edit.add_error(name, message)
            placed = True
        else:
            edit.add_error(None, error)
    if not placed:
        edit.add_error(None, exc.message)


@require_POST
@page("approvals:bulk-approve")
def bulk_approve_view(request: HtmxHttpRequest) -> HttpResponse:
    """Approve several tier-low requests at once. Tier high and ungated requests are refused one by one:
    each of those needs its own look."""
    form = BulkApproveForm(request.POST)
    if not form.is_valid():
        return _queue_render(request, bulk=form, status=400)
    done, refused = 0, []
    for request_id in form.cleaned_data["ids"]:
        try:
            approval_decide(
                request_id=request_id,
                approver=request.user,
                decision="approve",
                reason=form.cleaned_data["reason"],
                bulk=True,
            )
            done += 1
        except ApprovalRefused as exc:
            refused.append(f"{request_id[:8]}: {exc.message}")
        except (ValueError, TypeError):
            refused.append(f"{request_id[:8]}: " + _("not a request id"))
    if done:
        messages.success(
            request, ngettext("approved %(n)d tier-low request", "approved %(n)d tier-low requests", done) % {"n": done}
        )
    for line in refused:
        messages.error(request, line)
    return redirect("approvals:queue")


@page("approvals:history")
def history_page(request: HtmxHttpRequest) -> HttpResponse:
    form = HistoryFilterForm(request.GET or None)
    filters: dict[str, Any] = {}
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        filters = {k: data[k] or None for k in ("state", "tier", "domain", "tool", "decided_by", "patient_ref")}
        if data.get("since"):
            filters["since"] = timezone.make_aware(datetime.combine(data["since"], time.min))
    page = Paginator(history_list(request.user, **filters), 50).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {"form": form, "page": page, "query": query.urlencode()}
    template = "approvals/history.html#results" if request.htmx else "approvals/history.html"
    return render(request, template, context)


@page("approvals:counts")
def counts_partial(request: HttpRequest) -> HttpResponse:
    """The header's tier counts, re-fetched by htmx every few seconds."""
    return render(request, "approvals/_header_counts.html")
