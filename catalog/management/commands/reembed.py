from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from tqdm import tqdm

from catalog.rag.embedders import get_embedder
from catalog.rag.selectors.vectors import embeddable_tools, embedding_status, tools_needing_vectors
from catalog.rag.services.siblings import sibling_findings_refresh
from catalog.rag.services.vectors import batches, embeddings_refresh


class Command(BaseCommand):
    help = "Embed missing or stale tool vectors now, in this process (--all: every live tool)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--all", action="store_true", help="re-embed every live tool, current or not")
        parser.add_argument("--system", help="only this system's tools: condor, tucan or mcp:<server id>")

    def handle(self, *args: Any, all: bool, system: str | None, **options: Any) -> None:
        embedder = get_embedder()
        if all:
            # Every vector is replaced in place as its batch commits (no delete first): resolution keeps serving
            # the old vectors, never "policy-only", until each has its new one.
            tools = embeddable_tools().filter(system=system) if system else embeddable_tools()
            ids = list(tools.order_by("pk").values_list("pk", flat=True))
        else:
            ids = tools_needing_vectors(model_id=embedder.model_id, system=system)
        systems: set[str] = set()
        with tqdm(total=len(ids), unit="tool", desc=f"embedding with {embedder.model_id}", file=self.stderr) as bar:
            for chunk in batches(ids):
                result = embeddings_refresh(chunk, embedder=embedder, force=all)
                systems |= result.systems
                bar.update(len(chunk))
        for name in sorted(systems):
            found = sibling_findings_refresh(name)
            self.stdout.write(f"{name}: {found} sibling-near-duplicate finding(s)")
        status = embedding_status()
        self.stdout.write(f"embedded {status.embedded}, stale {status.stale}, missing {status.missing}")
