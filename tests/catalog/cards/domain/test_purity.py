"""Everything under catalog/cards/domain/ is pure: no Django, and of the app only other domain modules."""

from __future__ import annotations

import ast

from tests.conftest import ROOT

DOMAIN = ROOT / "catalog" / "cards" / "domain"


def test_pure_card_modules_have_no_django_imports() -> None:
    files = sorted(DOMAIN.rglob("*.py"))
    # The modules that were pure before the package existed live here now, with what was split out of them.
    assert {"checks.py", "bundles.py", "valuesets.py", "preview.py", "pofiles.py", "imports.py"} <= {
        path.name for path in files
    }
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}
        assert not [m for m in imported if m == "django" or m.startswith("django.")], path.name
        app = [m for m in imported if m.split(".")[0] in ("catalog", "approvals", "condor_admin")]
        assert all(m.startswith("catalog.cards.domain") for m in app), (path.name, app)
