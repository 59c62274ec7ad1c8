"""The OpenAI-compatible HTTP backend against a real local server that serves real vectors."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest
from django.test import Client

from catalog.rag.embedders import EmbedderError, HttpEmbedder, UseEmbedder
from catalog.rag.selectors.vectors import embeddable_tools
from catalog.rag.services.vectors import embeddings_refresh

from .conftest import import_demo

_use = UseEmbedder()


class EmbeddingsHandler(BaseHTTPRequestHandler):
    """What TEI / vLLM / Ollama answer at /v1/embeddings, computed by the real multilingual model."""

    mode = "ok"
    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if self.mode == "down":
            self.send_response(503)
            self.end_headers()
            self.wfile.write(b'{"error": "model loading"}')
            return
        vectors = _use.embed(body["input"])
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        if self.mode == "short":
            data = data[:-1]
        data.reverse()  # servers may answer out of order: the index says which is which
        payload = json.dumps({"object": "list", "model": body["model"], "data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    EmbeddingsHandler.mode, EmbeddingsHandler.seen = "ok", []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), EmbeddingsHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_http_vectors_match_the_model_they_come_from(server: str) -> None:
    texts = ["Blutdruck eintragen", "book an appointment", "Arztbrief schreiben"]
    remote = HttpEmbedder(server, "use-multilingual", api_key="secret").embed(texts)
    local = _use.embed(texts)
    assert remote.shape == local.shape and remote.dtype == np.float32
    assert np.allclose(np.sum(remote * local, axis=1), 1.0, atol=1e-5)  # same vectors, in the right order
    [request] = EmbeddingsHandler.seen
    assert request["path"] == "/v1/embeddings" and request["auth"] == "Bearer secret"
    assert request["model"] == "use-multilingual" and request["input"] == texts


def test_http_failures_are_embedder_errors_that_say_what_happened(server: str) -> None:
    EmbeddingsHandler.mode = "down"
    with pytest.raises(EmbedderError, match="answered 503"):
        HttpEmbedder(server, "m").embed(["x"])
    EmbeddingsHandler.mode = "short"
    with pytest.raises(EmbedderError, match="returned 1 vectors for 2 texts"):
        HttpEmbedder(server, "m").embed(["x", "y"])
    with pytest.raises(EmbedderError, match="unreachable"):
        HttpEmbedder("http://127.0.0.1:9", "m", timeout=2).embed(["x"])
    with pytest.raises(EmbedderError, match="CONDOR_EMBEDDER_URL"):
        HttpEmbedder("", "m")


@pytest.mark.django_db
def test_resolve_through_an_embedding_server(server: str, settings: Any, make_token: Any, client: Client) -> None:
    settings.CONDOR_EMBEDDER, settings.CONDOR_EMBEDDER_URL = "http", server + "/v1"
    settings.CONDOR_EMBEDDER_MODEL = "use-multilingual"
    import_demo()
    result = embeddings_refresh(list(embeddable_tools().filter(system="condor").values_list("pk", flat=True)))
    assert len(result.embedded) == embeddable_tools().filter(system="condor").count()
    token = make_token("runtime-rag", scopes=("rag",))
    response = client.post(
        "/api/v1/rag/resolve",
        {"prompt": "Blutdruck und Puls eintragen", "profile": "clinical-production"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["model"] == "http:use-multilingual" and "record.vitals" in body["toolIds"]

    EmbeddingsHandler.mode = "down"
    response = client.post(
        "/api/v1/rag/resolve",
        {"prompt": "anything else", "profile": "clinical-production"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 503 and "embedder is unavailable" in response.json()["detail"]
