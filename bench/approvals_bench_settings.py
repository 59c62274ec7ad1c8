"""Settings for the approvals benchmark: the app's own settings plus one bench-only URL (the bare insert).

Loaded by gunicorn with `--pythonpath bench` and DJANGO_SETTINGS_MODULE=approvals_bench_settings.
"""

from __future__ import annotations

from condor_admin.settings import *  # noqa: F403 - the real settings, unchanged but for the URLconf

ROOT_URLCONF = "approvals_bench_urls"
