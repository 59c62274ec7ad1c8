# Condor Admin. `make run` is the zero-service demo; `make test` runs the whole suite.
# The interpreter: Debian's python3.11 where there is one, else python3.11 on the PATH (override: make PYTHON=...).
# Debian's links libpython statically; this machine's pyenv build loads libpython3.11.so and was configured without
# --enable-optimizations. Side by side under the mixed load (bench/load_mixed.py, 200 req/s), the web processes
# spent 13 % less CPU per request on Debian's (5.2 against 5.95 ms, four runs each). A venv keeps the interpreter
# it was made with: `make clean` first to switch.
PYTHON ?= $(firstword $(wildcard /usr/bin/python3.11) python3.11)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test install messages compilemessages lint bench clean

$(PY):
	$(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

compilemessages: $(STAMP)
	$(VENV)/bin/pybabel compile --domain django --directory locale --use-fuzzy --statistics

# UI strings: Babel extracts (templates through condor_admin/babel_extract.py), updates and compiles;
# no GNU gettext needed. Translate the new entries in locale/de/LC_MESSAGES/django.po, then `make run`.
BABEL_KEYWORDS := -k gettext_lazy -k pgettext:1c,2 -k npgettext:1c,2,3 -k ngettext_lazy:1,2
messages: $(STAMP)
	DJANGO_SETTINGS_MODULE=condor_admin.settings $(VENV)/bin/pybabel -q extract -F babel.cfg $(BABEL_KEYWORDS) \
		--no-location --sort-output --project "Condor Admin" -o locale/django.pot .
	$(VENV)/bin/pybabel -q update -D django -i locale/django.pot -d locale --no-fuzzy-matching --ignore-obsolete -w 120

run: compilemessages
	$(PY) manage.py migrate --no-input
	$(PY) manage.py load_demo
	@echo ""
	@echo "Condor Admin on http://$(HOST):$(PORT)/  (admin at /admin/, API docs at /api/v1/docs)"
	$(PY) manage.py runserver $(HOST):$(PORT)

test: compilemessages
	$(PY) -m pytest $(PYTEST_ARGS)

# ruff, then mypy with django-stubs over the app packages ([tool.mypy] in pyproject.toml).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# gunicorn, Celery and the Redis client are main dependencies (the stamp installs them); PostgreSQL and
# redis-server come from the system (the load scripts say so when missing).
bench: $(STAMP)
	$(PY) bench/import_catalog.py
	$(PY) bench/lint_catalog.py
	$(PY) bench/console_pages.py
	$(PY) bench/cards_bundle.py
	$(PY) bench/rag_worker.py
	$(PY) bench/approvals_load.py
	$(PY) bench/load_mixed.py --seconds 300

clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache .ruff_cache .mypy_cache
	find . -name '__pycache__' -prune -exec rm -rf {} +
	find locale -name '*.mo' -delete
