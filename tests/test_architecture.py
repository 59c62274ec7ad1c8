"""Layout rules guarded mechanically (DESIGN.md): dependency direction and pure domain code."""

from __future__ import annotations

import ast
from pathlib import Path

from django.core.management import call_command

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def python_files(package: str) -> list[Path]:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"no Python files under {package}/"
    return files


def test_catalog_never_imports_approvals() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in python_files("catalog")
        if any(name == "approvals" or name.startswith("approvals.") for name in imported_modules(path))
    ]
    assert offenders == []


def test_domain_code_has_no_django_imports() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in python_files("catalog/domain")
        if any(name == "django" or name.startswith("django.") for name in imported_modules(path))
    ]
    assert offenders == []


def test_the_architecture_guard_can_see_an_import(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text("from approvals.models import X\nimport django.db\n")
    assert imported_modules(sample) == {"approvals.models", "django.db"}


def test_migrations_are_committed_for_every_model_change(db: object) -> None:
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_every_model_is_in_the_admin() -> None:
    """Raw maintenance needs every table reachable (read-only where a service owns the writes)."""
    from django.apps import apps
    from django.contrib import admin

    missing = [
        f"{model._meta.app_label}.{model.__name__}"
        for app in ("catalog", "approvals")
        for model in apps.get_app_config(app).get_models()
        if model not in admin.site._registry
    ]
    assert missing == []
