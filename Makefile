# Debian's optimised python3.11 where it exists (bench/README.md, "The interpreter"); `make clean` before PYTHON=...
PYTHON ?= $(firstword $(wildcard /usr/bin/python3.11) python3.11)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run demo-reset test install messages compilemessages lint bench bench-50k clean mcp-servers browser-assets

$(PY):
	$(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[test]'
	touch $(STAMP)

# .venv with the app and its test dependencies, reinstalled when pyproject.toml changes.
install: $(STAMP)

# Compile the UI translations (locale/<lang>/LC_MESSAGES/django.po into .mo files, which are not in git).
# File targets: an up-to-date .mo is not rewritten (CI's two test passes start side by side).
MO_FILES := $(patsubst %.po,%.mo,$(wildcard locale/*/LC_MESSAGES/django.po))
compilemessages: $(MO_FILES)
locale/%/LC_MESSAGES/django.mo: locale/%/LC_MESSAGES/django.po $(STAMP)
	$(VENV)/bin/pybabel compile --input-file $< --output-file $@ --use-fuzzy --statistics

BABEL_KEYWORDS := -k gettext_lazy -k N_ -k pgettext:1c,2 -k npgettext:1c,2,3 -k ngettext_lazy:1,2
# Extract the UI strings and update locale/de/LC_MESSAGES/django.po (Babel; no GNU gettext needed).
messages: $(STAMP)
	DJANGO_SETTINGS_MODULE=condor_admin.settings $(VENV)/bin/pybabel -q extract -F babel.cfg $(BABEL_KEYWORDS) \
		--no-location --sort-output --project "Condor Admin" -o locale/django.pot .
	$(VENV)/bin/pybabel -q update -D django -i locale/django.pot -d locale --no-fuzzy-matching --ignore-obsolete -w 120

# The zero-service demo on SQLite: migrate, load the demo catalogs and users (only into an empty database: a
# second `make run` keeps every edit made since), import the MCP server mcp-server-time, serve on $(HOST):$(PORT).
run: compilemessages
	$(PY) manage.py migrate --no-input
	$(PY) manage.py load_demo --if-empty
	@# A few calls suspended as the runtime would, for the approvers (none added while any is still pending).
	-$(PY) manage.py demo_requests
	@# A real MCP server as the third catalog (mcp:time, from the test extra); unchanged on later runs, nothing written.
	-$(PY) manage.py import_mcp --server time --as catalog-admin -- $(VENV)/bin/mcp-server-time --local-timezone Europe/Berlin
	@echo ""
	@echo "Condor Admin on http://$(HOST):$(PORT)/  (admin at /admin/, API docs at /api/v1/docs)"
	$(PY) manage.py runserver $(HOST):$(PORT)

# Start the demo over: a fresh SQLite database (db.sqlite3, or the SQLite file DATABASE_URL names), then `make run`.
demo-reset: $(STAMP)
	@case "$${DATABASE_URL:-sqlite}" in sqlite*) ;; *) echo "demo-reset only resets a SQLite demo database"; exit 2;; esac
	rm -f "$$($(PY) -c 'from django.conf import settings; import django, os; os.environ.setdefault("DJANGO_SETTINGS_MODULE", "condor_admin.settings"); django.setup(); print(settings.DATABASES["default"]["NAME"])')"
	$(MAKE) run

# The whole pytest-django suite (PYTEST_ARGS=... selects).
test: compilemessages mcp-servers browser-assets
	$(PY) -m pytest $(PYTEST_ARGS)

# ruff, then mypy with django-stubs over the app packages ([tool.mypy] in pyproject.toml).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# The npm MCP server the live-import tests start (tests/integration/mcp/), pinned, into .mcp-servers/ (not in git).
# `make test` installs it when npm is on PATH; without it those tests are skipped, unless
# CONDOR_REQUIRE_MCP_SERVERS=1 (CI sets it), which makes them fail instead.
MCP_EVERYTHING_VERSION := 2026.8.31
MCP_STAMP := .mcp-servers/.installed-$(MCP_EVERYTHING_VERSION)
$(MCP_STAMP):
	@if command -v npm >/dev/null; then \
		npm install --prefix .mcp-servers --save-exact --no-audit --no-fund --loglevel=error \
			@modelcontextprotocol/server-everything@$(MCP_EVERYTHING_VERSION) && touch $(MCP_STAMP); \
	else echo "npm not found: the tests that start @modelcontextprotocol/server-everything will be skipped"; fi
mcp-servers: $(MCP_STAMP)

# axe-core, the accessibility checker the browser tests inject into every page (tests/integration/browser/
# test_every_page.py), pinned, into .browser-assets/ (not in git). Without npm those tests are skipped, unless
# CONDOR_REQUIRE_BROWSER=1, which makes them fail instead.
AXE_CORE_VERSION := 4.10.3
AXE_STAMP := .browser-assets/.installed-$(AXE_CORE_VERSION)
$(AXE_STAMP):
	@if command -v npm >/dev/null; then \
		npm install --prefix .browser-assets --save-exact --no-audit --no-fund --loglevel=error \
			axe-core@$(AXE_CORE_VERSION) && touch $(AXE_STAMP); \
	else echo "npm not found: the axe-core checks of the browser tests will be skipped"; fi
browser-assets: $(AXE_STAMP)

# The benchmarks under bench/ and a 1-minute mixed load at 50 req/s (bench/README.md).
bench: $(STAMP)
	$(PY) bench/import_catalog.py
	$(PY) bench/large_import.py --at-caps 250
	$(PY) bench/large_import.py --tools 5000 20000
	$(PY) bench/lint_catalog.py
	$(PY) bench/manipulation.py
	$(PY) bench/governance.py
	$(PY) bench/console_pages.py
	$(PY) bench/cards_bundle.py
	$(PY) bench/rag_worker.py
	$(PY) bench/retrieval_quality.py --backends use
	$(PY) bench/retrieval_experiments.py
	$(PY) bench/rag_scale.py --tools 500,5000,20000,50000
	$(PY) bench/mcp_findings.py
	$(PY) bench/mcp_import.py --tools 500 5000 50000
	$(PY) bench/otlp_ingest.py
	$(PY) bench/approvals_load.py
	$(PY) bench/load_mixed.py --seconds 60 --rate 50

# Issue 24's cost curve at 500, 5,000 and 50,000 tools, ours beside each baseline, on the PostgreSQL database
# DATABASE_URL names (scratch databases are created beside it; about 30 minutes on 2 cores; bench/README.md).
bench-50k: $(STAMP)
	@case "$${DATABASE_URL:-}" in postgres*) ;; *) echo "bench-50k needs DATABASE_URL=postgres://... (a scratch database)"; exit 2;; esac
	$(PY) bench/import_catalog.py --tools 500 5000 50000
	$(PY) bench/console_pages.py --tools 500 5000 50000
	$(PY) bench/rag_scale.py --tools 500,5000,50000
	$(PY) bench/rag_worker.py --tools 5000
	$(PY) bench/rag_worker.py --tools 50000 --embedder cheap

# Remove .venv, the demo database, caches and compiled catalogs.
clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache .ruff_cache .mypy_cache
	find . -name '__pycache__' -prune -exec rm -rf {} +
	find locale -name '*.mo' -delete
