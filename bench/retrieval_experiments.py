"""Benchmark: two ways to rank better that were measured and not adopted (catalog/rag/README.md, "What was tried
and not adopted").

Both add a fourth signal to the hybrid's three (whole, phrase, lexical; fused by z-scores, the default), trained per
catalog on nothing but the catalog's own texts (the embedded text and every phrase of each tool, USE vectors), so
no retrieval case is learned from:

- `tool classifier`: a multinomial logistic regression from a text's vector to its tool (scikit-learn), scored by
  its decision function: it weighs the directions that tell a tool's phrases from its neighbours';
- `read/write`: a logistic regression from a text's vector to its tool's declared `mutating`; each tool moves by
  how sure the classifier is that the prompt asks for a change, towards tools that agree. Beside it, its upper
  bound: the same move with the expected tool's own declaration (no classifier can do better).

Chosen on the tuning split only (the weights below were the best there); the held-back split is reported with
the choice made. No database: the demo manifests and cases are parsed by the domain code as in
bench/retrieval_quality.py, whose structures (and embedder cache) this reuses.

    .venv/bin/python bench/retrieval_experiments.py
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
import retrieval_quality as rq  # noqa: E402

from catalog.rag.domain.cases import SPLITS  # noqa: E402
from catalog.rag.domain.evaluation import RankedCase, evaluate  # noqa: E402
from catalog.rag.domain.hybrid import RankingConfig, _zscores, score_prompt  # noqa: E402

Bonus = Callable[[dict[str, Any], np.ndarray, np.ndarray], np.ndarray]  # (case, rows, prompt vector) → per row


def _training(system: rq.HybridSystem) -> tuple[np.ndarray, np.ndarray]:
    """Every text the catalog has of each tool (its whole text and its positive phrases), with the tool's row."""
    vectors, rows = [], []
    for r in range(len(system.ids)):
        start, end = system.phrases.pos_start[r], system.phrases.pos_start[r + 1]
        for vector in [system.whole[r], *system.phrases.positive[start:end]]:
            vectors.append(vector)
            rows.append(r)
    return np.array(vectors), np.array(rows)


def fused(system: rq.HybridSystem, mask: np.ndarray, query: np.ndarray, prompt: str) -> tuple[np.ndarray, np.ndarray]:
    """Every eligible row, best first, and its fused score as the app fuses it by default (`hybrid.fuse`: the three
    signals' z-scores, equal weights)."""
    scored = score_prompt(
        whole_matrix=system.whole,
        phrases=system.phrases,
        lexical=system.lexical,
        row_mask=mask,
        query=query,
        prompt=prompt,
        config=RankingConfig(shortlist=10_000),
    )
    return scored.shortlist, scored.fused


def metatool(embedder: Any) -> str:
    """The tool classifier on MetaTool single-tool (its tools have one sentence each and declare no `mutating`)."""
    tools = json.loads((rq.METATOOL / "tools.json").read_text(encoding="utf-8"))
    queries = [
        q for q in json.loads((rq.METATOOL / "queries.json").read_text(encoding="utf-8")) if q["task"] == "single-tool"
    ]
    system = rq.hybrid_system(embedder, [(t["id"], t["description"], None) for t in tools])
    vectors = embedder.embed([q["query"] for q in queries])
    decisions = LogisticRegression(C=10.0, max_iter=3000).fit(*_training(system)).decision_function(vectors)
    lines = []
    for weight in (0.0, 1.0, 2.0):
        ranked = []
        for i, q in enumerate(queries):
            rows, base = fused(system, np.ones(len(system.ids), dtype=bool), vectors[i], q["query"])
            total = base + weight * _zscores(decisions[i][rows].astype(np.float64))
            order = rows[np.argsort(-total, kind="stable")]
            ranked.append(RankedCase(f"q{i}", [system.ids[int(r)] for r in order], q["expected"]))
        s = evaluate(ranked)
        lines.append(f"tool classifier weight {weight:g}: {s.recall_at(1):.3f} / {s.recall_at(5):.3f} / {s.mrr:.3f}")
    return f"MetaTool single-tool ({len(queries)} queries; weight 0 is the default): " + "; ".join(lines)


def main() -> None:
    started = time.perf_counter()
    embedder = rq.CachedEmbedder(rq.build(rq.BACKENDS["use"])[0])
    catalogs = rq.demo_catalogs()
    systems = {
        name: rq.hybrid_system(
            embedder, [(t.declared_id, t.rag_description, t.rag_keywords) for t in m.tools if t.plane == "business"]
        )
        for name, m in catalogs.items()
    }
    mutating = {name: {t.declared_id: bool(t.mutating) for t in m.tools} for name, m in catalogs.items()}
    cases = json.loads((rq.DEMO / "retrieval_cases.json").read_text(encoding="utf-8"))["cases"]
    queries = embedder.embed([c["prompt"] for c in cases])

    tool_models = {}
    write_models = {}
    for name, system in systems.items():
        vectors, rows = _training(system)
        tool_models[name] = LogisticRegression(C=10.0, max_iter=3000).fit(vectors, rows)
        writes = np.array([mutating[name][system.ids[r]] for r in rows])
        write_models[name] = LogisticRegression(C=1.0, max_iter=3000, class_weight="balanced").fit(vectors, writes)

    def sign(case: dict[str, Any], rows: np.ndarray) -> np.ndarray:
        ids = systems[case["system"]].ids
        return np.array([1.0 if mutating[case["system"]][ids[r]] else -1.0 for r in rows])

    def tool_classifier(case: dict[str, Any], rows: np.ndarray, query: np.ndarray) -> np.ndarray:
        decision = tool_models[case["system"]].decision_function(query[None, :])[0]
        return _zscores(decision[rows].astype(np.float64))

    def read_write(case: dict[str, Any], rows: np.ndarray, query: np.ndarray) -> np.ndarray:
        p = float(write_models[case["system"]].predict_proba(query[None, :])[0][1])
        return (2 * p - 1) * sign(case, rows)

    def read_write_bound(case: dict[str, Any], rows: np.ndarray, _query: np.ndarray) -> np.ndarray:
        wanted = 1.0 if mutating[case["system"]][case["expected"][0]] else -1.0
        return wanted * sign(case, rows)

    variants: dict[str, tuple[float, Bonus | None]] = {
        "fused norm (the default)": (0.0, None),
        "+ tool classifier (weight 1)": (1.0, tool_classifier),
        "+ tool classifier (weight 2)": (2.0, tool_classifier),
        "+ read/write (weight 1)": (1.0, read_write),
        "+ read/write, its upper bound (weight 2)": (2.0, read_write_bound),
    }
    ranked: dict[str, list[list[str]]] = {name: [] for name in variants}
    for i, case in enumerate(cases):
        system = systems[case["system"]]
        wanted = set(rq.candidates(catalogs[case["system"]], case["profile"]))
        rows, base = fused(system, np.array([t in wanted for t in system.ids]), queries[i], case["prompt"])
        for name, (weight, bonus) in variants.items():
            total = base if bonus is None else base + weight * bonus(case, rows, queries[i])
            order = rows[np.argsort(-total, kind="stable")]
            ranked[name].append([system.ids[int(r)] for r in order])

    groups = [(split, language) for split in SPLITS for language in ("en", "de")]
    print("## Measured and not adopted (recall@1 / @5 / MRR; demo cases, embedder use)\n")
    print("| variant | " + " | ".join(f"{s} {lang} (n)" for s, lang in groups) + " |")
    print("|---|" + "---|" * len(groups))
    for name in variants:
        cells = []
        for split, language in groups:
            picked = [
                RankedCase(c["id"], ranked[name][i], c["expected"])
                for i, c in enumerate(cases)
                if c.get("split", "tune") == split and c["language"] == language
            ]
            s = evaluate(picked)
            cells.append(f"{s.recall_at(1):.2f} / {s.recall_at(5):.2f} / {s.mrr:.2f} ({s.cases})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\n" + metatool(embedder))
    print(f"\nwall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
