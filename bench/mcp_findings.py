"""Benchmark: every safety rule on the 118 real MCP tool definitions, and how the findings were judged by hand.

Reads ../shared/benchmarks/mcp-tools/tools.json, builds one `mcp-tools/v1` document per server (the tool exactly as
tools/list returned it; no governance overlay, so no team and no tier), parses each with the importer's parser and
lints each server's catalog with every rule, with `foreign_names` = every other server's tools and the two demo
catalogs (what the findings service gives an MCP catalog). Prints and writes bench/out/mcp_findings.json: counts per
rule, per rule × server, and every finding; then, per rule, how many findings bench/data/mcp_findings_judged.json
judged right, wrong, or not at all, and the misses recorded there.

Pure domain code: no Django settings, no database (about a second).

    .venv/bin/python bench/mcp_findings.py [--tools PATH] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog.domain.keys import llm_name  # noqa: E402
from catalog.domain.manifest import Manifest, parse_manifest  # noqa: E402
from catalog.domain.ownership import derive_owner  # noqa: E402
from catalog.domain.rules import RULES, Finding, LintCatalog, LintTool, lint  # noqa: E402
from catalog.domain.rules.mcp import write_signs  # noqa: E402

TOOLS = ROOT.parent / "shared" / "benchmarks" / "mcp-tools" / "tools.json"
JUDGED = ROOT / "bench" / "data" / "mcp_findings_judged.json"
OUT = ROOT / "bench" / "out" / "mcp_findings.json"
DEMO = ROOT / "catalog" / "demo"
# Judged by what the rule is for, not tool by tool: it fires on every mutating tool without a tier by design, and
# the bench gives no tier. Whether its "mutating" reading is right is judged in the judged file's notes.
# `unowned` likewise: the bench imports each server without a governance overlay, so no team owns any tool.
NOT_JUDGED_BY_DESIGN = ("mutate-without-hitl", "unowned")


def server_documents(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One mcp-tools/v1 document per server, its tools exactly as listed (without the benchmark's id/server)."""
    docs: dict[str, dict[str, Any]] = {}
    for tool in tools:
        server = tool["server"]
        doc = docs.setdefault(
            server,
            {
                "format": "mcp-tools/v1",
                "server": {"id": server, "name": server, "version": "bench", "protocolVersion": "2025-06-18"},
                "tools": [],
            },
        )
        doc["tools"].append({k: v for k, v in tool.items() if k not in ("id", "server")})
    return docs


def names_of(manifest: Manifest) -> list[tuple[str, str]]:
    """(system, name) for every spelling of every tool: declared id, LLM name, aliases."""
    return [
        (manifest.system, name)
        for d in manifest.tools
        for name in sorted({d.declared_id, llm_name(d.declared_id), *(d.aliases or [])})
    ]


def owners(manifest: Manifest) -> dict[str, str | None]:
    table = {(r.plane, r.module): r.team for r in manifest.ownership}
    return {d.declared_id: derive_owner(d.plane, d.module, table) for d in manifest.tools}


def verb_reading(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The contradiction rule's "says it writes" reading on every tool, against the readOnlyHint the tool
    declares (the 52 annotated tools are the ground truth): how often a read-only tool would be flagged (the
    rule's false positives) and how many declared writers the reading sees (its recall)."""
    table: Counter[str] = Counter()
    unannotated: dict[str, list[str]] = {"reads as write": [], "reads as read": []}
    for server, doc in server_documents(tools).items():
        for d in parse_manifest(doc).tools:
            says_write = bool(write_signs(d))
            hint = ((d.mcp or {}).get("annotations") or {}).get("readOnlyHint")
            if hint is None:
                unannotated["reads as write" if says_write else "reads as read"].append(f"{server}/{d.declared_id}")
            else:
                table[f"declared {'read-only' if hint else 'write'}, reads as {'write' if says_write else 'read'}"] += 1
    return {"annotated": dict(sorted(table.items())), "unannotated": unannotated}


def lint_all(tools: list[dict[str, Any]]) -> list[tuple[str, Finding]]:
    """(server, finding) for every finding of every rule on every server's catalog."""
    manifests = {server: parse_manifest(doc) for server, doc in server_documents(tools).items()}
    demos = [parse_manifest(json.loads((DEMO / f"{name}.json").read_text())) for name in ("condor", "tucan")]
    demo_names = [n for m in demos for n in names_of(m)]
    found: list[tuple[str, Finding]] = []
    for server, manifest in manifests.items():
        foreign = [n for other, m in manifests.items() if other != server for n in names_of(m)] + demo_names
        view = LintCatalog(
            system=manifest.system,
            tools=[LintTool(d, owners(manifest).get(d.declared_id)) for d in manifest.tools],
            foreign_names=tuple(foreign),
        )
        found.extend((server, f) for f in lint(view))
    return found


def report(found: list[tuple[str, Finding]], judged: dict[str, Any]) -> dict[str, Any]:
    per_rule = Counter(f.rule for _, f in found)
    per_server: dict[str, Counter[str]] = defaultdict(Counter)
    for server, f in found:
        per_server[f.rule][server] += 1
    verdicts: dict[str, Counter[str]] = defaultdict(Counter)
    for server, f in found:
        key = f"{f.rule}|{server}/{f.tool_id}"
        verdict = judged.get(key)
        if f.rule in NOT_JUDGED_BY_DESIGN and verdict is None:
            verdicts[f.rule]["by design"] += 1
        elif verdict is None:
            verdicts[f.rule]["not judged"] += 1
        else:
            verdicts[f.rule]["right" if verdict["right"] else "wrong"] += 1
    return {
        "findings": len(found),
        "per_rule": dict(sorted(per_rule.items())),
        "per_rule_server": {r: dict(sorted(c.items())) for r, c in sorted(per_server.items())},
        "judged": {r: dict(verdicts[r]) for r in sorted(per_rule)},
        "stale_judgments": sorted(
            k for k in judged if k not in {f"{f.rule}|{s}/{f.tool_id}" for s, f in found} and "|" in k
        ),
        "misses": judged.get("misses", []),
        "every_finding": [{"rule": f.rule, "tool": f"{s}/{f.tool_id}", "message": f.message[:160]} for s, f in found],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=Path, default=TOOLS)
    parser.add_argument("--json", type=Path, default=OUT)
    args = parser.parse_args()
    started = time.perf_counter()
    tools = json.loads(args.tools.read_text())
    found = lint_all(tools)
    elapsed = time.perf_counter() - started
    judged = json.loads(JUDGED.read_text()) if JUDGED.exists() else {}
    out = report(found, judged)
    out["verb_reading"] = verb_reading(tools)
    out["seconds"] = round(elapsed, 3)
    print(f"{out['findings']} findings on {args.tools.name} in {elapsed:.2f} s")
    print(f"{'rule':34} {'findings':>8} {'right':>6} {'wrong':>6} {'not judged':>10}  per server")
    for r, n in out["per_rule"].items():
        v = out["judged"][r]
        servers = ", ".join(f"{s} {c}" for s, c in out["per_rule_server"][r].items())
        right = v.get("right", 0) if r not in NOT_JUDGED_BY_DESIGN else "design"
        print(f"{r:34} {n:>8} {right:>6} {v.get('wrong', 0):>6} {v.get('not judged', 0):>10}  {servers}")
    print("verb reading vs declared readOnlyHint:", out["verb_reading"]["annotated"])
    print(
        "unannotated tools the verb reading takes for writes:",
        len(out["verb_reading"]["unannotated"]["reads as write"]),
    )
    for miss in out["misses"]:
        print(f"miss: {miss['rule']} {miss['tool']}: {miss['why']}")
    if out["stale_judgments"]:
        print(f"{len(out['stale_judgments'])} judgment(s) of findings that no longer fire: {out['stale_judgments']}")
    unknown = sorted(set(out["per_rule"]) - set(RULES))
    assert not unknown, unknown
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
