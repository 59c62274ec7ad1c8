from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

from condor_admin import boot

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor_admin.settings")
application = get_wsgi_application()
# For a server that did not run the gate before loading the app (gunicorn without the Procfile's --config, another
# WSGI host): under gunicorn, BootRefused fails the worker's boot and the arbiter halts (exit 3). Under the
# Procfile the arbiter passed the gate in on_starting, and the workers it forks skip this second run.
boot.gate("web")
