"""Settings for bench/connections.py: the app's own settings, plus Django's psycopg pool when BENCH_POOL_MAX_SIZE
is set (the candidate the settings do not default to: it needs psycopg[pool], `pip install psycopg-pool`).

Loaded by gunicorn with `--pythonpath bench` and DJANGO_SETTINGS_MODULE=connections_settings.
"""

from __future__ import annotations

import os

from condor_admin.settings import *  # noqa: F403 - the real settings, unchanged but for the pool
from condor_admin.settings import DATABASES

if max_size := int(os.environ.get("BENCH_POOL_MAX_SIZE", "0")):
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # Django refuses persistent connections beside its pool
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": int(os.environ.get("BENCH_POOL_MIN_SIZE", "2")),
        "max_size": max_size,
        # How long a request waits for a connection before it fails (503): also while PostgreSQL is away.
        "timeout": float(os.environ.get("BENCH_POOL_TIMEOUT", "2")),
    }
