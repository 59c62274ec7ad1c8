"""Shared start-up for the benchmark scripts: Django on DATABASE_URL, else a throw-away SQLite file."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup_django() -> None:
    """Configure Django for a benchmark run and migrate its database."""
    for path in (ROOT, ROOT / "bench"):
        if str(path) not in sys.path:
            sys.path.insert(0, str(path))
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tempfile.mkdtemp(prefix='condor-bench-')}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor_admin.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
