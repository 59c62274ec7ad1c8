"""`manage.py demo_requests`: a few pending approval requests for the demo's approvers to work on.

They are made the way the runtime makes them (the evaluate service, as a call under clinical-production would be
suspended), so what the queue shows is what a real suspension looks like. `make run` calls this; it does nothing
while any request is still pending, so restarting the demo never piles them up.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.core.management.base import BaseCommand
from django.utils import timezone

from approvals.models import ApprovalRequest
from approvals.services.common import ApprovalRefused
from approvals.services.evaluate import approval_evaluate

DEMO_TTL_SECONDS = 4 * 3600  # the longest a tier-high request may wait: a demo session has time to try each one

# (tool, dispatch mode, which patient, arguments without patientId)
DEMO_CALLS: tuple[tuple[str, str, int, dict[str, Any]], ...] = (
    ("prescribeMedication", "supervised", 0, {"drug": "Amoxicillin", "strength": "500 mg", "dose": "1-1-1", "days": 7}),
    (
        "create-prescription",
        "supervised",
        0,
        {"pzn": "04527098", "strength": "5 mg", "dosageInstructions": "1-0-0", "packSize": "N1"},
    ),
    ("adjustMedicationDose", "supervised", 1, {"drug": "Metoprolol", "from": "47.5 mg", "to": "95 mg"}),
    ("createInvoiceDraft", "supervised", 1, {"items": [{"code": "GOÄ 1", "factor": 2.3}]}),
)


class Command(BaseCommand):
    help = "Suspend a few demo tool calls so the approvers have pending requests (nothing while any is pending)."

    def handle(self, *args: Any, **options: Any) -> None:
        if ApprovalRequest.objects.pending().exists():
            self.stdout.write("Approval requests are still pending: no demo requests added.")
            return
        patients = [str(uuid.uuid4()), str(uuid.uuid4())]
        stamp = timezone.now().strftime("%Y%m%d%H%M%S")
        made = 0
        for n, (tool, mode, patient, call_args) in enumerate(DEMO_CALLS):
            try:
                result = approval_evaluate(
                    tool_name=tool,
                    profile="clinical-production",
                    dispatch_mode=mode,
                    run_id=f"demo-run-{stamp}",
                    requested_by="dr.demo",
                    patient_ref=patients[patient],
                    args={"patientId": patients[patient], **call_args},
                    idempotency_key=f"demo-{stamp}-{n}",
                    via="demo",
                    ttl_seconds=DEMO_TTL_SECONDS,
                )
            except ApprovalRefused as exc:
                self.stderr.write(f"  {tool}: refused ({exc})")
                continue
            if result.request is not None:
                made += 1
                self.stdout.write(f"  {tool}: {result.request.state}, domain {result.request.policy_domain}")
            else:
                self.stdout.write(f"  {tool}: {result.decision} ({result.reason})")
        self.stdout.write(f"{made} demo approval request(s) pending for {DEMO_TTL_SECONDS // 3600} h.")
