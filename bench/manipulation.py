"""Benchmark: the llm-text-manipulation rule on real tool definitions and on a labelled set.

  (a) quiet on real texts: the 118 MCP tool definitions in ../shared/benchmarks/mcp-tools/tools.json (each
      server one catalog: name → declared id, description → description, inputSchema → input schema) and the
      two demo catalogs; every flagged tool is printed with the kinds, so each flag can be judged;
  (b) caught on poisoned texts: bench/data/manipulation_cases.json, poisoned variants and clean near misses
      written by hand; recall and precision per tool, and whether each poisoned case got its expected kinds.

Pure domain code: no Django settings, no database.

    .venv/bin/python bench/manipulation.py [--mcp PATH] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog.domain.descriptor import Descriptor  # noqa: E402
from catalog.domain.manifest import load_manifest  # noqa: E402
from catalog.domain.rules import LintCatalog, LintTool, lint  # noqa: E402
from catalog.domain.rules.manipulation import RULE_ID  # noqa: E402

MCP_TOOLS = ROOT.parent / "shared" / "benchmarks" / "mcp-tools" / "tools.json"
CASES = ROOT / "bench" / "data" / "manipulation_cases.json"
DEMO = ROOT / "catalog" / "demo"


def descriptor(tool: dict[str, Any], module: str) -> Descriptor:
    """An MCP tool (or a labelled case) in the shape the rule reads; its safety axes do not matter here."""
    read_only = (tool.get("annotations") or {}).get("readOnlyHint", False)
    return Descriptor(
        declared_id=tool["name"],
        plane="business",
        module=module,
        availability="production",
        mutating=not read_only,
        retry_class="none",
        idempotency="none",
        description=tool.get("description") or "",
        rag_description=tool.get("ragDescription") or "",
        rag_keywords=tool.get("ragKeywords") or {},
        instruction_fragment=tool.get("instructionFragment"),
        styling_fragment=tool.get("stylingFragment"),
        output_instructions=tool.get("outputInstructions"),
        input_schema=tool.get("inputSchema"),
    )


def flagged(view: LintCatalog) -> dict[str, list[dict[str, str]]]:
    """Tool id → its hits, for the tools the rule flags."""
    return {f.tool_id or "": f.details["hits"] for f in lint(view, only=[RULE_ID])}


def real_catalogs(mcp_path: Path) -> list[tuple[str, LintCatalog]]:
    tools = json.loads(mcp_path.read_text(encoding="utf-8"))
    servers: dict[str, list[dict[str, Any]]] = {}
    for t in tools:
        servers.setdefault(t["server"], []).append(t)
    views = [
        (f"mcp/{server}", LintCatalog(server, [LintTool(descriptor(t, server), "owner") for t in ts]))
        for server, ts in sorted(servers.items())
    ]
    raws = {name: (DEMO / f"{name}.json").read_bytes() for name in ("condor", "tucan")}
    teams = [team["id"] for raw in raws.values() for team in json.loads(raw).get("teams", [])]
    for name, raw in raws.items():
        manifest = load_manifest(raw, known_team_ids=teams)
        views.append((f"demo/{name}", LintCatalog(name, [LintTool(d, "owner") for d in manifest.tools])))
    return views


def run_real(mcp_path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    print("(a) real tool definitions")
    print(f"  {'catalog':<28} {'tools':>5} {'flagged':>7}")
    for name, view in real_catalogs(mcp_path):
        hits = flagged(view)
        out[name] = {"tools": len(view.tools), "flagged": {k: v for k, v in sorted(hits.items())}}
        print(f"  {name:<28} {len(view.tools):>5} {len(hits):>7}")
        for tool_id, tool_hits in sorted(hits.items()):
            for h in tool_hits:
                print(f"      {tool_id}: {h['field']}: {h['kind']} ({h['signal']}) {h['excerpt']!r}")
    return out


def score(cases: list[dict[str, Any]], siblings: list[LintTool]) -> dict[str, Any]:
    """Confusion counts per tool, the expected kinds caught, and every miss and false alarm."""
    counts = {"tp": 0, "fn": 0, "fp": 0, "tn": 0}
    per_kind: dict[str, list[int]] = {}
    misses: list[str] = []
    for case in cases:
        tool = LintTool(descriptor(case["tool"], "cases"), "owner")
        hits = flagged(LintCatalog("cases", [*siblings, tool])).get(case["tool"]["name"], [])
        got = {h["kind"] for h in hits}
        if case["label"] == "poisoned":
            counts["tp" if hits else "fn"] += 1
            for kind in case["kinds"]:
                per_kind.setdefault(kind, [0, 0])[0] += 1
                per_kind[kind][1] += kind in got
                if kind not in got:
                    misses.append(f"{case['id']}: expected {kind}, got {sorted(got) or 'nothing'}")
        else:
            counts["fp" if hits else "tn"] += 1
            if hits:
                misses.append(f"{case['id']} (clean) flagged: {[(h['kind'], h['signal']) for h in hits]}")
    tp, fn, fp = counts["tp"], counts["fn"], counts["fp"]
    return {
        **counts,
        "recall": round(tp / max(1, tp + fn), 3),
        "precision": round(tp / max(1, tp + fp), 3),
        "kinds": {k: {"cases": n, "caught": c} for k, (n, c) in sorted(per_kind.items())},
        "misses": misses,
    }


def run_labelled(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    siblings = [LintTool(descriptor(t, "siblings"), "owner") for t in data["siblings"]]
    sets: dict[str, list[dict[str, Any]]] = {}
    for case in data["cases"]:
        sets.setdefault(case.get("set", "tuned"), []).append(case)
    results = {name: score(cases, siblings) for name, cases in [*sorted(sets.items()), ("all", data["cases"])]}
    print(f"\n(b) labelled set {path.relative_to(ROOT)}: 'tuned' written with the rule; 'held-out-1' written after")
    print(
        "    it (first run: recall 0.45, precision 1.00), then tuned on; 'held-out-2' written after that, not tuned on"
    )
    print(
        f"  {'set':<10} {'poisoned':>8} {'clean':>6} {'TP':>4} {'FN':>4} {'FP':>4} {'TN':>4} "
        f"{'recall':>7} {'precision':>9}"
    )
    for name, r in results.items():
        print(
            f"  {name:<10} {r['tp'] + r['fn']:>8} {r['fp'] + r['tn']:>6} {r['tp']:>4} {r['fn']:>4} {r['fp']:>4} "
            f"{r['tn']:>4} {r['recall']:>7.3f} {r['precision']:>9.3f}"
        )
    print(f"  {'kind (all sets)':<22} {'expected kind caught':>20}")
    for kind, k in results["all"]["kinds"].items():
        print(f"  {kind:<22} {k['caught']:>16}/{k['cases']}")
    for line in results["all"]["misses"]:
        print(f"  miss: {line}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mcp", type=Path, default=MCP_TOOLS, help="MCP tools.json (default: %(default)s)")
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "out" / "manipulation.json")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}")
    started = time.perf_counter()
    results: dict[str, Any] = {"real": run_real(args.mcp), "labelled": run_labelled(CASES)}
    results["seconds"] = round(time.perf_counter() - started, 2)
    print(f"\n{results['seconds']} s")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
