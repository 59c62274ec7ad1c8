"""approvals' pure modules stay pure (DESIGN.md): the suspend policy, hashing and display import no Django."""

from __future__ import annotations

from tests.test_architecture import ROOT, imports_of

PURE = ("approvals/domain.py", "approvals/display.py")


def test_the_suspend_policy_and_hashing_have_no_django_imports() -> None:
    offenders = {
        path: sorted(
            i.module for i in imports_of(ROOT / path) if i.module == "django" or i.module.startswith("django.")
        )
        for path in PURE
    }
    assert offenders == {path: [] for path in PURE}
    assert all((ROOT / path).is_file() for path in PURE)
