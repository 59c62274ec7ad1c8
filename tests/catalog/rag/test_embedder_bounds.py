"""The embedder's second guard: every text is cut to CONDOR_EMBED_MAX_CHARS before the model sees it, so no
text (a prompt, an old vector's text, a manifest that predates the bounds) can make a process balloon."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from catalog.rag.domain.text import cut_text
from catalog.rag.embedders import get_embedder


def test_a_text_within_the_cap_is_untouched() -> None:
    assert cut_text("prescribe a medication", 22) == "prescribe a medication"


def test_a_long_text_is_cut_at_a_word_boundary_near_the_cap() -> None:
    text = "word " * 100  # 500 characters
    cut = cut_text(text, 102)
    assert len(cut) <= 102 and cut.endswith("word") and text.startswith(cut)


def test_a_text_without_spaces_is_cut_at_the_cap() -> None:
    assert cut_text("x" * 50, 10) == "x" * 10


def test_a_ten_megabyte_text_embeds_as_its_head_in_well_under_a_second(settings: Any) -> None:
    """The review's reproduction grew a process to 23 GB; cut, it costs what its first 6,000 characters cost."""
    settings.CONDOR_EMBED_MAX_CHARS = 6000
    embedder = get_embedder()
    embedder.embed(["warm up"])
    huge = "Medikation verordnen, prescribe the medication for the open patient. " * 150_000
    started = time.perf_counter()
    vector = embedder.embed([huge])[0]
    elapsed = time.perf_counter() - started
    assert elapsed < 2.0, f"{elapsed:.2f} s"
    assert np.allclose(vector, embedder.embed([cut_text(huge, 6000)])[0], atol=1e-6)
    assert not np.allclose(vector, embedder.embed([huge[:3000]])[0], atol=1e-3)  # the cap, not a smaller cut
