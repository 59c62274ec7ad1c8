"""Approvers' pages: the live queue, one request, the decision, bulk approval (tier low only), history."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, time
from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from approvals.access import page
from approvals.display import ArgRow, readable_args, short_id
from approvals.domain import State
from approvals.forms import ArgsEditForm, DecisionForm, HistoryFilterForm
from approvals.models import TIER_KEYS, ApprovalRequest
from approvals.selectors import history_list, is_own_request, may_decide, may_view, queue_for, request_get
from approvals.services import OBJECT_TYPE, ApprovalRefused, approval_decide
from catalog.models import AuditEvent

# The list re-renders at least this often even when nothing changed, so "time left" stays honest.
QUEUE_REFRESH_SECONDS = 30


@dataclass
class QueueItem:
    req: ApprovalRequest
    args: list[ArgRow]
    own: bool
    patient: str
    outcome: str = ""  # after a decision from the list: what happened
    outcome_kind: str = ""  # "ok", "info" (someone else was first) or "error"


def _item(user: Any, req: ApprovalRequest, outcome: str = "", kind: str = "") -> QueueItem:
    return QueueItem(
        req=req,
        args=readable_args(req.proposed_args, req.tool.input_schema),
        own=is_own_request(user, req),
        patient=short_id(req.patient_ref),
        outcome=outcome,
        outcome_kind=kind,
    )


def _fingerprint(items: list[QueueItem], now: datetime) -> str:
    parts = [f"{i.req.pk}:{i.req.escalated_to}" for i in items] + [str(int(now.timestamp()) // QUEUE_REFRESH_SECONDS)]
    return hashlib.sha1("|".join(parts).encode(), usedforsecurity=False).hexdigest()[:16]


@page("approvals:queue")
def queue_page(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    items = [_item(request.user, r) for r in queue_for(request.user, now=now)]
    fingerprint = _fingerprint(items, now)
    # The poll asks "anything new since <fingerprint>?": an unchanged queue answers 204 and htmx swaps nothing,
    # so a reason being typed is not wiped every few seconds.
    if request.htmx and request.GET.get("since") == fingerprint:  # type: ignore[attr-defined]
        return HttpResponse(status=204)
    tiers = dict.fromkeys(TIER_KEYS, 0)
    for item in items:
        tiers[item.req.tier_key] += 1
    context = {"items": items, "fingerprint": fingerprint, "now": now, "tiers": tiers}
    template = "approvals/queue.html#queue" if request.htmx else "approvals/queue.html"  # type: ignore[attr-defined]
    return render(request, template, context)


def _visible_request(request: HttpRequest, request_id: str) -> ApprovalRequest:
    """404 to people who may neither decide nor review this request: they do not learn it exists."""
    req = request_get(request_id)
    if req is None or not may_view(request.user, req):
        raise Http404("no such approval request for you")
    return req


@page("approvals:detail")
def request_page(request: HttpRequest, request_id: str) -> HttpResponse:
    req = _visible_request(request, request_id)
    schema = req.tool.input_schema or {}
    pending = req.current_state == State.PENDING
    deciding = pending and may_decide(request.user, req) and not is_own_request(request.user, req)
    events = AuditEvent.objects.filter(object_type=OBJECT_TYPE, object_id=str(req.pk)).order_by("pk")
    return render(
        request,
        "approvals/request.html",
        {
            "req": req,
            "proposed": readable_args(req.proposed_args, schema),
            "approved": readable_args(req.approved_args, schema, compare_to=req.proposed_args)
            if req.approved_args is not None
            else None,
            "may_decide": deciding,
            "own": is_own_request(request.user, req),
            "edit_form": ArgsEditForm(schema=schema, proposed=req.proposed_args) if deciding and schema else None,
            "events": events,
        },
    )


@require_POST
@page("approvals:decide")
def decide_view(request: HttpRequest, request_id: str) -> HttpResponse:
    req = _visible_request(request, request_id)
    outcome = _decide(request, req)
    if request.htmx:  # type: ignore[attr-defined]
        item = _item(request.user, outcome.req, outcome.text, outcome.kind)
        return render(request, "approvals/queue.html#row", {"item": item, "now": timezone.now()})
    if outcome.forbidden:
        return HttpResponseForbidden(outcome.text)
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


def _decide(request: HttpRequest, req: ApprovalRequest) -> Outcome:
    """Validate the posted decision (and edited arguments), then call the one service that decides."""
    form = DecisionForm(request.POST)
    if not form.is_valid():
        return Outcome(req, "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in form.errors.items()), "error")
    approved_args = None
    if request.POST.get("edit") and form.cleaned_data["decision"] == "approve":
        edit = ArgsEditForm(request.POST, schema=req.tool.input_schema or {}, proposed=req.proposed_args)
        if not edit.is_valid():
            labels = {k: (edit.fields[k].label if k in edit.fields else k) for k in edit.errors}
            text = "; ".join(f"{labels[k]}: {' '.join(map(str, v))}" for k, v in edit.errors.items())
            return Outcome(req, text, "error")
        approved_args = edit.edited_args()
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
        text = exc.message + ("; " + "; ".join(exc.errors) if exc.errors else "")
        # Someone else deciding first is news, not a failure.
        kind = "info" if exc.code in ("already-decided", "expired", "cancelled") else "error"
        return Outcome(exc.request or req, text, kind, forbidden=exc.forbidden)
    verb = "approved" if req.state == State.APPROVED else "rejected"
    edited = " with your changes" if req.args_edited else ""
    return Outcome(req, f"{verb}{edited} by you at {timezone.localtime(req.decided_at):%H:%M:%S}")


@require_POST
@page("approvals:bulk-approve")
def bulk_approve_view(request: HttpRequest) -> HttpResponse:
    """Approve several tier-low requests at once. Tier high and ungated requests are refused one by one:
    each of those needs its own look."""
    ids = request.POST.getlist("ids")
    reason = request.POST.get("reason", "")
    done, refused = 0, []
    for request_id in ids:
        try:
            approval_decide(request_id=request_id, approver=request.user, decision="approve", reason=reason, bulk=True)
            done += 1
        except ApprovalRefused as exc:
            refused.append(f"{request_id[:8]}: {exc.message}")
        except (ValueError, TypeError):
            refused.append(f"{request_id[:8]}: not a request id")
    if done:
        messages.success(request, f"approved {done} tier-low request(s)")
    for line in refused:
        messages.error(request, line)
    return redirect("approvals:queue")


@page("approvals:history")
def history_page(request: HttpRequest) -> HttpResponse:
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
    template = "approvals/history.html#results" if request.htmx else "approvals/history.html"  # type: ignore[attr-defined]
    return render(request, template, context)


@page("approvals:counts")
def counts_partial(request: HttpRequest) -> HttpResponse:
    """The header's tier counts, re-fetched by htmx every few seconds."""
    return render(request, "approvals/_header_counts.html")
