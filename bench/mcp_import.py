"""Benchmark: importing a live MCP server against importing the manifest it gave, side by side, 500 to 50,000 tools.

A real MCP server on the official SDK (tests/integration/mcp/rugpull_server.py, `--tools N`, 100 tools per
`tools/list` page) is started over stdio for each live import. Per size, in alternating order each round:
  - live, first: `mcp_import_live` (start the server, initialize, every page of tools/list, then the import);
  - file, first: `catalog_import` of the very manifest the live import saved, under another server id (the fair
    baseline: the same bytes through the same importer, without the transport);
  - live and file again, unchanged (what an hourly re-import of a quiet server costs: the listing, then a hash
    comparison that writes nothing);
  - the listing alone (`fetch_listing`), to show what the transport costs on its own.
Medians over the rounds and the live/file ratios. The embedding tasks an import enqueues are not run (the broker is
in memory and not eager): bench/large_import.py measures that follow-on work.

    .venv/bin/python bench/mcp_import.py [--tools 500 5000 50000] [--rounds 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _django import setup_django  # noqa: E402

SERVER = ROOT / "tests" / "integration" / "mcp" / "rugpull_server.py"
PAGE = 100
TIMEOUT = 900.0


def command(n: int) -> list[str]:
    return [sys.executable, str(SERVER), "--tools", str(n), "--page-size", str(PAGE)]


def one_round(n: int, tag: str, live_first: bool, scratch: Path) -> dict[str, float]:
    from catalog.core.audit import Actor
    from catalog.mcp.client import fetch_listing
    from catalog.mcp.services import mcp_import_live
    from catalog.services.imports import catalog_import

    actor = Actor(label="bench")
    saved = scratch / f"{tag}.json"
    out: dict[str, float] = {}

    def live() -> None:
        t0 = time.perf_counter()
        result = mcp_import_live(
            server_id=f"live-{tag}", command=command(n), timeout=TIMEOUT, via="bench", actor=actor, save_to=saved
        )
        out["live first"] = time.perf_counter() - t0
        assert len(result.added) == n, result.summary()
        t0 = time.perf_counter()
        again = mcp_import_live(server_id=f"live-{tag}", command=command(n), timeout=TIMEOUT, via="bench", actor=actor)
        out["live unchanged"] = time.perf_counter() - t0
        assert again.unchanged, again.summary()

    def file() -> None:
        if not saved.exists():  # the file side imports what a live import saved: list once when it goes first
            mcp_import_live(
                server_id=f"seed-{tag}", command=command(n), timeout=TIMEOUT, via="bench", actor=actor, save_to=saved
            )
        doc = json.loads(saved.read_bytes())
        doc["server"]["id"] = f"file-{tag}"
        raw = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()
        t0 = time.perf_counter()
        result = catalog_import(raw=raw, via="bench", actor=actor)
        out["file first"] = time.perf_counter() - t0
        assert len(result.added) == n, result.summary()
        t0 = time.perf_counter()
        assert catalog_import(raw=raw, via="bench", actor=actor).unchanged
        out["file unchanged"] = time.perf_counter() - t0

    for step in (live, file) if live_first else (file, live):
        step()
    t0 = time.perf_counter()
    listing = fetch_listing(command=command(n), timeout=TIMEOUT)
    out["listing alone"] = time.perf_counter() - t0
    assert len(listing.tools) == n
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, nargs="+", default=[500, 5000, 50000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "out" / "mcp_import.json")
    args = parser.parse_args()
    setup_django()
    logging.getLogger("condor.import").setLevel(logging.WARNING)
    logging.getLogger("condor.audit").setLevel(logging.WARNING)
    logging.getLogger("catalog").setLevel(logging.WARNING)  # "embedding batch …": queued, not run here
    from condor_admin.celery import app

    app.conf.task_always_eager = False  # enqueue the embedding tasks into the in-memory broker; do not run them

    report: dict[str, Any] = {"rounds": args.rounds, "page_size": PAGE, "sizes": {}}
    print(f"{'tools':>7} {'measure':<16} {'median s':>9} {'live/file':>10}")
    with tempfile.TemporaryDirectory(prefix="condor-mcp-bench-") as tmp:
        for n in args.tools:
            rounds = [one_round(n, f"{n}-{r}", r % 2 == 0, Path(tmp)) for r in range(args.rounds)]
            medians = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
            ratios = {
                "first": medians["live first"] / medians["file first"],
                "unchanged": medians["live unchanged"] / medians["file unchanged"],
            }
            report["sizes"][n] = {"median_seconds": medians, "live_over_file": ratios, "rounds": rounds}
            for key, value in medians.items():
                kind = key.split()[-1]
                ratio = f"{ratios[kind]:.2f}×" if key.startswith("live") and kind in ratios else ""
                print(f"{n:>7} {key:<16} {value:>9.3f} {ratio:>10}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2))
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
