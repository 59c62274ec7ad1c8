from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.domain import rules
from catalog.domain.manifest import ManifestError, load_manifest
from catalog.domain.ownership import derive_owner
from catalog.domain.vocabulary import system_problem
from catalog.models import Team
from catalog.selectors.catalog import catalog_systems, imported_catalog_systems
from catalog.services.findings import findings_recompute, lint_view_from_db, lint_view_from_manifest

THRESHOLDS = {"error": {"error"}, "warning": {"error", "warning"}, "never": set()}


class Command(BaseCommand):
    help = (
        "Check a catalog against the safety rules: the stored catalog, or a manifest file (--manifest, nothing is "
        "written). Exits 1 when a finding reaches --fail-on, so a source repository's CI can gate on it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--system", help="condor, tucan or mcp:<server id> (default: every imported catalog)")
        parser.add_argument("--manifest", type=Path, help="lint this manifest instead of the stored catalog")
        parser.add_argument("--format", choices=["text", "json"], default="text")
        parser.add_argument("--fail-on", choices=sorted(THRESHOLDS), default="error")
        parser.add_argument("--save", action="store_true", help="store the findings of the stored catalog")

    def handle(self, *args: Any, **options: Any) -> None:
        views = self._views(options)
        findings = [f for view in views for f in rules.lint(view)]
        if options["save"]:
            for view in views:
                findings_recompute(view.system)
        if options["format"] == "json":
            self.stdout.write(json.dumps([f.__dict__ for f in findings], indent=1, ensure_ascii=False))
        else:
            self._text(findings, [v.system for v in views])
        failing = [f for f in findings if f.severity in THRESHOLDS[options["fail_on"]]]
        if failing:
            self.stderr.write(f"{len(failing)} finding(s) at or above --fail-on {options['fail_on']}")
            sys.exit(1)

    def _views(self, options: dict[str, Any]) -> list[rules.LintCatalog]:
        path: Path | None = options["manifest"]
        if path is None:
            if options["system"] and (problem := system_problem(options["system"])):
                raise CommandError(f"--system: {problem}")
            if options["system"]:
                _require_imported(options["system"])
            systems = [options["system"]] if options["system"] else catalog_systems()
            return [lint_view_from_db(system) for system in systems]
        if options["save"]:
            raise CommandError("--save stores the stored catalog's findings; it cannot be used with --manifest")
        try:
            manifest = load_manifest(path.read_bytes(), known_team_ids=Team.objects.values_list("slug", flat=True))
        except OSError as exc:
            raise CommandError(f"{path}: {exc.strerror}") from exc
        except ManifestError as exc:
            raise CommandError(f"{path}: not a valid manifest:\n  " + "\n  ".join(exc.listed())) from exc
        if options["system"] and options["system"] != manifest.system:
            raise CommandError(f"--system {options['system']}: {path} is a {manifest.system} manifest")
        index = {(r.plane, r.module): r.team for r in manifest.ownership}
        owners = {d.declared_id: derive_owner(d.plane, d.module, index) for d in manifest.tools}
        return [lint_view_from_manifest(manifest, owners)]

    def _text(self, findings: list[rules.Finding], systems: list[str]) -> None:
        for f in findings:
            where = f.tool_id or "(catalog)"
            self.stdout.write(f"{f.severity.upper():<8} {f.rule:<28} {where}: {f.message}")
        per_rule = Counter((f.severity, f.rule) for f in findings)
        self.stdout.write("")
        self.stdout.write(f"{', '.join(systems)}: {len(findings)} finding(s)")
        for (severity, rule_id), n in sorted(per_rule.items()):
            self.stdout.write(f"  {n:>5}  {severity:<8} {rule_id}")


def _require_imported(system: str) -> None:
    """A check that matched nothing must not pass: linting a system with no imported catalog found 0 findings and
    exited 0, so a misspelt --system in CI gated nothing."""
    imported = imported_catalog_systems()
    if system not in imported:
        known = ", ".join(imported) if imported else "none yet"
        raise CommandError(
            f"--system {system}: no catalog of that system has been imported (imported: {known}); name one of "
            "those, import the catalog first (import_catalog, import_mcp), or lint a file with --manifest"
        )
