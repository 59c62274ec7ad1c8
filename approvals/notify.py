"""Telling approvers: e-mail through Django's mail backend and an optional Slack-compatible webhook.

Both run in Celery tasks started after the request's transaction commits, never on the runtime's
request path. A failing mail server or webhook is logged and does not undo anything.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone

from approvals.models import ApprovalRequest
from catalog.core.roles import approver_group
from catalog.domain.output_safety import one_line, slack_literal, slack_text

log = logging.getLogger(__name__)


# Links: APPROVALS_BASE_URL set is always used (a deployment behind a proxy names its public address). Unset, the
# host the person or the runtime reached the console on (`request.build_absolute_uri`, which honours ALLOWED_HOSTS
# and, with USE_X_FORWARDED_HOST, the proxy's host), so a demo on another port links to that port. A notification
# the worker sends has no request: it uses the host of the evaluate call that created the request (stored on it).


def console_origin(request: HttpRequest | None) -> str:
    """`https://console.example.org`: the configured base URL, else this request's scheme and host."""
    if settings.APPROVALS_BASE_URL:
        return settings.APPROVALS_BASE_URL
    if request is None:
        return ""
    return request.build_absolute_uri("/").rstrip("/")


def request_link(req: ApprovalRequest, request: HttpRequest | None = None) -> str:
    """The request page's address: absolute whenever the console knows its own address (a bare path otherwise)."""
    path = reverse("approvals:detail", args=[req.pk])
    if settings.APPROVALS_BASE_URL:
        return settings.APPROVALS_BASE_URL + path
    if request is not None:
        return console_origin(request) + path
    return (req.console_origin or "") + path


def ensure_group(name: str) -> None:
    """Domain groups appear as requests for new domains (TUCAN categories) arrive, so admins can fill them."""
    try:
        with transaction.atomic():
            Group.objects.get_or_create(name=name)
    except IntegrityError:  # created concurrently: it exists, which is all we need
        pass


def group_emails(group: str) -> list[str]:
    users = get_user_model().objects.filter(groups__name=group, is_active=True).exclude(email="")
    return sorted(set(users.values_list("email", flat=True)))


# How much of a caller-supplied field (requestedBy, patientRef: up to 200 characters each at the API) a message
# shows: enough to recognise it, with the request's page one link away.
FIELD_CHARS = 80
ID_CHARS = 200  # a tool id, as the manifest bounds it
SUBJECT_CHARS = 300


def summary(req: ApprovalRequest, quote: Callable[[str, int], str] = one_line) -> str:
    """One request on one line. `quote` puts each caller-supplied field in (`one_line` for e-mail,
    `slack_literal` for the webhook): the runtime sent them, so they may carry newlines or markup."""
    flag = " [UNGATED MUTATION: no HITL tier declared]" if req.flagged else ""
    patient = f" for patient {quote(req.patient_ref, FIELD_CHARS)}" if req.patient_ref else ""
    return (
        f"{one_line(req.tool_declared_id, ID_CHARS)} (tier {req.tier_key}, {req.dispatch_mode}){patient} "
        f"requested by {quote(req.requested_by, FIELD_CHARS)}{flag}; "
        f"expires {timezone.localtime(req.expires_at):%Y-%m-%d %H:%M:%S}"
    )


def message_text(requests: list[ApprovalRequest], *, lead: str, quote: Callable[[str, int], str] = one_line) -> str:
    """The lead line, then each request's summary and link on lines of their own."""
    return lead + "\n" + "\n".join(f"• {summary(req, quote)}\n  {request_link(req)}" for req in requests)


def post_webhook(text: str, url: str | None = None) -> bool:
    url = url if url is not None else settings.APPROVALS_WEBHOOK_URL
    if not url:
        return False
    body = json.dumps({"text": text}).encode("utf-8")
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=settings.APPROVALS_WEBHOOK_TIMEOUT_SECONDS) as response:  # noqa: S310 - configured URL
            return 200 <= response.status < 300
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        log.warning("approvals webhook %s failed: %s", url, exc)
        return False


def notify(requests: list[ApprovalRequest], *, group: str, subject: str, lead: str) -> dict[str, object]:
    """E-mail the group's members and post the webhook, one message for all `requests`, each with its link;
    returns what was sent (for logs and tests)."""
    ensure_group(group)
    text = message_text(requests, lead=lead)
    recipients = group_emails(group)
    mailed = 0
    if recipients:
        try:
            mailed = send_mail(one_line(subject, SUBJECT_CHARS), text, settings.DEFAULT_FROM_EMAIL, recipients)
        except Exception as exc:  # the mail server's failure is not the request's failure
            log.warning("approvals mail to %s failed: %s", group, exc)
    else:
        log.info("no member of %s has an e-mail address; %d request(s) not mailed", group, len(requests))
    # The webhook's text is Slack markup: the same message with the fields in code spans, then escaped.
    posted = post_webhook(slack_text(message_text(requests, lead=lead, quote=slack_literal)))
    return {"recipients": recipients, "mailed": mailed, "webhook": posted}


def notify_suspended(domain: str, requests: list[ApprovalRequest]) -> dict[str, object]:
    tiers = ", ".join(sorted({r.tier_key for r in requests}))
    if len(requests) == 1:
        subject = f"[Condor] approval needed: {requests[0].tool_declared_id} (tier {tiers})"
    else:
        subject = f"[Condor] {len(requests)} approval requests need you: {domain} (tiers {tiers})"
    return notify(
        requests,
        group=approver_group(domain),
        subject=subject,
        lead=f"Approval needed in domain {domain} ({len(requests)} new):",
    )


def notify_escalated(req: ApprovalRequest) -> dict[str, object]:
    return notify(
        [req],
        group=req.escalated_to or settings.APPROVALS_ESCALATION_GROUP,
        subject=f"[Condor] ESCALATED: {req.tool_declared_id} still waits for approval",
        lead=f"Escalated: pending since {timezone.localtime(req.created_at):%H:%M:%S}, nobody of its domain decided:",
    )
