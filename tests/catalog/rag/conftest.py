"""The demo catalog with its vectors, and an embedder that counts what it was asked to embed."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from django.test import Client

from catalog.models import Tool
from catalog.rag import embedders
from catalog.rag.domain.phrases import tool_phrases
from catalog.rag.selectors import resolution
from catalog.rag.selectors.vectors import embeddable_tools
from catalog.rag.services import vectors
from catalog.rag.services.vectors import embeddings_refresh
from tests.conftest import ROOT, forget_caches, module_transaction, signed_import, tasks_in_process

DEMO = ROOT / "catalog" / "demo"
RESOLVE_URL = "/api/v1/rag/resolve"


class CountingEmbedder:
    """The configured (real) embedder, counting calls and texts: the tests assert what was re-embedded."""

    def __init__(self, inner: embedders.Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed(texts)

    @property
    def texts(self) -> int:
        return sum(len(c) for c in self.calls)


def pieces_of(*tools: Tool) -> int:
    """How many texts the worker embeds for these tools: each one's whole text and each of its phrases."""
    return sum(1 + len(tool_phrases(t.rag_description, t.rag_keywords).all) for t in tools)


@pytest.fixture
def counting_embedder(monkeypatch: pytest.MonkeyPatch) -> CountingEmbedder:
    counter = CountingEmbedder(embedders.get_embedder())
    for module in (embedders, vectors, resolution):
        monkeypatch.setattr(module, "get_embedder", lambda: counter)
    return counter


@pytest.fixture(autouse=True)
def _in_process_celery() -> Iterator[None]:
    with tasks_in_process():
        yield


def import_demo() -> None:
    for name in ("condor.json", "tucan.json"):
        signed_import((DEMO / name).read_bytes())


@pytest.fixture(scope="module")
def demo_embedded_once(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """`demo_embedded`'s data built once for a module whose every database test uses it (tests/shared_data.py,
    `module_transaction`): such a module overrides `demo_embedded` with a fixture that takes `shared_demo_embedded`."""
    with module_transaction(django_db_blocker):
        with django_db_blocker.unblock(), tasks_in_process():
            import_demo()
            embeddings_refresh(list(embeddable_tools().values_list("pk", flat=True)))
        yield


@pytest.fixture
def shared_demo_embedded(demo_embedded_once: None, db: Any) -> None:
    forget_caches()


@pytest.fixture
def demo_embedded(db: Any) -> None:
    import_demo()
    embeddings_refresh(list(embeddable_tools().values_list("pk", flat=True)))


@pytest.fixture
def resolve(demo_embedded: None, make_token: Callable[..., str], client: Client) -> Callable[..., Any]:
    """POST /api/v1/rag/resolve with a rag-scoped token on clinical-production unless the body says otherwise."""
    token = make_token("runtime-rag", scopes=("rag",))

    def call(expect: int = 200, **body: Any) -> dict[str, Any]:
        payload = {"profile": "clinical-production", **body}
        auth = f"Bearer {token}"
        response = client.post(RESOLVE_URL, payload, content_type="application/json", HTTP_AUTHORIZATION=auth)
        assert response.status_code == expect, response.content
        return response.json()

    return call
