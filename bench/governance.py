"""Benchmark: what governance costs as the catalog grows (500, 5,000, 50,000 tools).

For each size, on a fresh database: import the generated catalog and sign it off (two officers), import a revision
that weakens 1% of the tools, then report medians of
  - the effective-policy read of every tool under the clinical profile (`effective_policies`, what
    GET /api/v1/catalog/policy serves), and the same read under the non-clinical `demo` profile (the baseline: the
    newest import, no projection);
  - the approvals gate's index rebuild with the in-effect view (`catalog_index` after a change);
  - the sign-off that puts the weakening revision in effect (second approval), once per size.

    .venv/bin/python bench/governance.py [--sizes 500,5000,50000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _django import setup_django  # noqa: E402


def timed(fn: Any, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def weakened(manifest: dict[str, Any]) -> dict[str, Any]:
    changed = json.loads(json.dumps(manifest))
    for i, tool in enumerate(changed["tools"]):
        if i % 100 == 7:  # 1%: a mutating tool's description rewritten, or a read tool's policy domain moved
            tool["ragDescription"] = tool["ragDescription"].replace("task number", "any task, e.g. number")
            tool["policyDomain"] = "billing"
    changed["source"]["commit"] = "1" * 40
    return changed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="500,5000,50000")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    setup_django()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.db import connection
    from import_catalog import make_manifest

    from approvals.catalog_index import catalog_index, forget
    from catalog.core import roles
    from catalog.models import Tool
    from catalog.selectors.effect import effective_policies
    from catalog.services.imports import catalog_import
    from catalog.services.signoff import revision_review

    print(f"governance benchmark: medians of {args.rounds} rounds, ms")
    print(
        f"{'tools':>7} {'awaiting':>8} {'policy clinical':>16} {'policy demo':>12} {'ratio':>6} "
        f"{'gate index':>11} {'sign-off':>9}"
    )
    if connection.vendor == "postgresql":
        # The audit tables' trigger (migration 0014) lets a TRUNCATE through only where a session asks for it:
        # this throw-away benchmark database, as the test suite does for its own.
        with connection.cursor() as cursor:
            cursor.execute("SET condor.allow_audit_truncate = 'on'")
    for n in (int(s) for s in args.sizes.split(",")):
        call_command("flush", verbosity=0, interactive=False)
        call_command("migrate", verbosity=0)  # the flush took the seeded floors and roles with it
        group = Group.objects.get_or_create(name=roles.SAFETY_OFFICER)[0]
        officers = [User.objects.create(username=f"officer{i}") for i in range(2)]
        for officer in officers:
            officer.groups.add(group)
        manifest = make_manifest(n)
        first = catalog_import(raw=json.dumps(manifest).encode(), via="bench").revision
        for officer in officers:
            revision_review(revision_id=first.pk, reviewer=officer, decision="approved", comment="bench")
        second = catalog_import(raw=json.dumps(weakened(manifest)).encode(), via="bench").revision
        awaiting = Tool.objects.filter(awaiting_signoff=True).count()
        clinical = timed(lambda: effective_policies(profile="clinical-production"), args.rounds)
        demo = timed(lambda: effective_policies(profile="demo"), args.rounds)

        def rebuild() -> None:
            forget()
            catalog_index()

        gate = timed(rebuild, args.rounds)
        start = time.perf_counter()
        for officer in officers:
            revision_review(revision_id=second.pk, reviewer=officer, decision="approved", comment="bench")
        signoff = (time.perf_counter() - start) * 1000
        print(
            f"{n:>7} {awaiting:>8} {clinical:>16.1f} {demo:>12.1f} {clinical / demo:>6.2f} {gate:>11.1f} "
            f"{signoff:>9.1f}"
        )


if __name__ == "__main__":
    main()
