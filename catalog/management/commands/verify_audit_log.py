from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.core.audit import (
    AuditVerification,
    CheckpointUnreadable,
    audit_verify,
    audit_verify_checkpoints,
    checkpoint_lines,
)


def refusal(result: AuditVerification, what: str) -> CommandError:
    return CommandError(f"audit log BROKEN at {result.place}: {result.reason} ({result.checked} {what} before it)")


class Command(BaseCommand):
    help = (
        "Seal pending audit events, recompute the keyed hash chain; name the first edited, deleted, unlinked or "
        "forged event. With --checkpoints FILE, also hold the chain against the checkpoints sealing wrote there "
        "(catches truncation and rewrites of the newest events)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--checkpoints",
            metavar="FILE",
            help="a checkpoint file (CONDOR_AUDIT_CHECKPOINT_FILE: one JSON line per seal), or condor.audit log "
            "lines ('audit checkpoint seq=N hash=H') exported from the log store",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        result = audit_verify()
        if not result.ok:
            raise refusal(result, "event(s) verified")
        summary = f"audit log intact: {result.checked} event(s), chain verified"
        path = options.get("checkpoints")
        if path:
            try:
                with open(path, encoding="utf-8", errors="replace") as lines:
                    checked = audit_verify_checkpoints(checkpoint_lines(lines))
            except OSError as exc:
                raise CommandError(f"cannot read the checkpoint file {path}: {exc.strerror or exc}") from None
            except CheckpointUnreadable as exc:
                raise CommandError(f"checkpoint file {path}, {exc}") from None
            if not checked.ok:
                raise refusal(checked, f"checkpoint(s) of {path} matched")
            summary += f"; {checked.checked} checkpoint(s) from {path} match"
        self.stdout.write(summary)
