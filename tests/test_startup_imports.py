"""A management command starts in about a second: what every process imports at start-up (settings, apps, their
checks, the URLconf) leaves out scikit-learn, SciPy's statistics and the MCP SDK, which only resolving a prompt
and reaching an MCP server need (`manage.py whoowns` waited 3 s for them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT

PROBE = """
import json, sys
import django
django.setup()
from django.core.checks import run_checks
from django.urls import get_resolver
get_resolver().url_patterns  # the URLconf: the API and every page
run_checks(include_deployment_checks=False, databases=None)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {"sklearn", "mcp", "mcp_types", "anyio", "httpx2"}
                        or m == "scipy.stats")))
"""


def test_starting_a_command_imports_nothing_only_resolve_and_mcp_need() -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "condor_admin.settings", "DATABASE_URL": "sqlite:///:memory:"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, check=True, capture_output=True, text=True, timeout=120
    )
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded == [], f"imported at start-up: {loaded[:10]}"


def test_ranking_still_finds_its_lexical_signal() -> None:
    """The lazy import is still the real one: the lexical signal counts n-grams with scikit-learn."""
    from catalog.rag.domain.lexical import term_counts

    counts = term_counts(["Medikation", "medication"])
    assert counts.shape[0] == 2 and counts[0].nnz > 0 and counts[1].nnz > 0
