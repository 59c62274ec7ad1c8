"""gunicorn's configuration for the Procfile's web process (`--config python:condor_admin.gunicorn_conf`).

Only server hooks live here; the command line keeps the tunables. gunicorn applies every module-level name that
is one of its settings, so this module defines nothing else.
"""

from __future__ import annotations

from typing import Any

from condor_admin.boot import exit_if_refused


def on_starting(server: Any) -> None:
    """The boot gate, in the arbiter, before it binds the port or forks a worker.

    gunicorn calls this hook from Arbiter.start() ahead of creating its listening sockets, and Arbiter.run()
    calls start() before its main loop's try block: the SystemExit raised on a refusal ends the master at once
    with status 1, and nothing ever listens on the port. (The WSGI application load, the other place a gate could
    sit, runs in each worker after the port is bound; condor_admin/wsgi.py keeps it there only as a fallback.)
    """
    exit_if_refused("web")
