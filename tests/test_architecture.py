"""The house plan, guarded mechanically (TOOLS.md, "Map of the code"): the import direction of the layers, what
approvals may import of catalog, pure domain code, Django's public APIs only, no hidden import cycles, small
modules and functions."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parent.parent
APP_PACKAGES = ("catalog", "approvals", "condor_admin")
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60

# The layers, lowest first. A module may import modules of its own layer or a lower one, never a higher one:
# pages and endpoints -> services and selectors -> core and models -> domain.
DOMAIN, CORE, SERVICES, BOUNDARY = 0, 1, 2, 3
LAYER_NAMES = {DOMAIN: "domain", CORE: "core/models", SERVICES: "services/selectors", BOUNDARY: "web/api"}
# What a path segment says about the layer of everything under it (the first one found from the left wins,
# so catalog.rag.domain.text is domain code, catalog.cards.services.imports a service).
SEGMENT_LAYERS = {
    "domain": DOMAIN,
    "models": CORE,
    "core": CORE,
    "services": SERVICES,
    "selectors": SERVICES,
    "web": BOUNDARY,
    "api": BOUNDARY,
    "views": BOUNDARY,
    "urls": BOUNDARY,
    "forms": BOUNDARY,
    "tasks": BOUNDARY,
    "admin": BOUNDARY,
    "apps": BOUNDARY,
    "checks": BOUNDARY,
    "management": BOUNDARY,
    "templatetags": BOUNDARY,
    "context_processors": BOUNDARY,
}
# Modules whose name does not say their layer: each is placed here, with why.
NAMED_LAYERS = {
    "approvals.schema": DOMAIN,  # JSON-schema checks of arguments over plain values
    "approvals.catalog_index": SERVICES,  # the gate's per-catalog-version read of tools and profiles
    "approvals.notify": SERVICES,  # sends the mail and webhook posts of the beat's service
    "approvals.access": BOUNDARY,  # page decorators
    "approvals.display": BOUNDARY,  # how a page shows arguments
    "approvals.labels": BOUNDARY,  # the words pages show for states and tiers
    "catalog.cards.display": BOUNDARY,  # how the cards pages label states, checks and slots
    "catalog.rag.embedders": CORE,  # the embedder interface and its implementations (infrastructure)
    "catalog.mcp.client": CORE,  # the MCP SDK client that lists a live server's tools (infrastructure)
    "catalog.usage.otlp": CORE,  # OTLP bodies in and out with opentelemetry-proto's classes (infrastructure)
    "catalog.usage.catalog_index": SERVICES,  # the ingest's per-catalog-version read of tools and what is in effect
    "catalog.usage.otlp_api": BOUNDARY,  # the OTLP/HTTP endpoint
}
# approvals stands on catalog's platform and reads, never on its writes or pages (DESIGN.md).
APPROVALS_MAY_IMPORT = ("catalog.core", "catalog.models", "catalog.domain", "catalog.selectors")
# Django's ORM internals: their names change between minors (the INSERT compiler did in 6.0).
PRIVATE_DJANGO = (
    "django.db.models.sql",
    "django.db.models.query",
    "django.db.models.query_utils",
    "django.db.models.fields.related_descriptors",
    "django.db.backends",
)


@dataclass(frozen=True)
class Import:
    module: str  # the module or package imported from
    names: tuple[str, ...]  # the names taken from it ("" for `import x`)
    line: int
    in_function: str | None  # the enclosing function, if the import runs inside one


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def app_files(*packages: str) -> list[Path]:
    files = sorted(p for pkg in packages for p in (ROOT / pkg).rglob("*.py") if "migrations" not in p.parts)
    assert files, f"no Python files under {packages}"
    return files


def imports_of(path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
            if isinstance(child, ast.Import):
                found.extend(Import(a.name, ("",), child.lineno, function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                found.append(Import(base, tuple(a.name for a in child.names), child.lineno, function))
            visit(child, inner)

    visit(tree, None)
    return found


def is_app(module: str) -> bool:
    return module.split(".")[0] in APP_PACKAGES


def targets(imp: Import, known: set[str]) -> Iterator[str]:
    """The app modules an import depends on: `from pkg import mod` depends on pkg.mod when that is a module."""
    for name in imp.names:
        sub = f"{imp.module}.{name}"
        yield sub if sub in known else imp.module


def layer_of(module: str) -> int | None:
    if module in NAMED_LAYERS:
        return NAMED_LAYERS[module]
    for segment in module.split(".")[1:]:
        if segment in SEGMENT_LAYERS:
            return SEGMENT_LAYERS[segment]
    return None


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in app_files("catalog", "approvals")}


def test_every_app_module_has_a_layer() -> None:
    unplaced = [m for m in all_modules() if layer_of(m) is None and not m.endswith("__init__") and m.count(".")]
    packages = {m for m in all_modules() if (ROOT / m.replace(".", "/")).is_dir()}
    assert sorted(set(unplaced) - packages) == []


def test_layers_import_only_their_own_layer_or_lower_ones() -> None:
    modules = all_modules()
    known = set(modules)
    offenders = []
    for module, path in modules.items():
        own = layer_of(module)
        if own is None:
            continue
        for imp in imports_of(path):
            for target in targets(imp, known):
                theirs = layer_of(target) if is_app(target) else None
                if theirs is not None and theirs > own:
                    offenders.append(
                        f"{path.relative_to(ROOT)}:{imp.line} ({LAYER_NAMES[own]}) imports {target} "
                        f"({LAYER_NAMES[theirs]})"
                    )
    assert offenders == []


def test_approvals_imports_only_catalogs_platform_models_domain_and_reads() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{imp.line} imports {imp.module}"
        for path in app_files("approvals")
        for imp in imports_of(path)
        if imp.module.split(".")[0] == "catalog"
        and not any(imp.module == a or imp.module.startswith(a + ".") for a in APPROVALS_MAY_IMPORT)
    ]
    assert offenders == []


def test_catalog_never_imports_approvals() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{imp.line}"
        for path in app_files("catalog")
        for imp in imports_of(path)
        if imp.module.split(".")[0] == "approvals"
    ]
    assert offenders == []


def test_selectors_read_and_never_import_a_service() -> None:
    """Reads through selectors, writes through services (CONVENTIONS.md 2): a selector that imports a service can
    call a write from a page's read, and a service's imports come with it (catalog/selectors/tool.py did)."""
    modules = all_modules()
    offenders = [
        f"{name}:{imp.line} imports {target}"
        for name, path in modules.items()
        if "selectors" in name.split(".")
        for imp in imports_of(path)
        if is_app(imp.module)
        for target in targets(imp, set(modules))
        if "services" in target.split(".")
    ]
    assert offenders == []


def test_domain_code_is_pure() -> None:
    """No Django, and no app module outside domain code: plain values in, plain values out."""
    modules = all_modules()
    offenders = [
        f"{path.relative_to(ROOT)}:{imp.line} imports {imp.module}"
        for module, path in modules.items()
        if layer_of(module) == DOMAIN
        for imp in imports_of(path)
        if imp.module.split(".")[0] == "django"
        or (is_app(imp.module) and any(layer_of(t) != DOMAIN for t in targets(imp, set(modules))))
    ]
    assert offenders == []


def test_no_app_code_imports_djangos_private_orm_modules() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{imp.line} imports {imp.module} {', '.join(imp.names)}"
        for path in app_files(*APP_PACKAGES)
        for imp in imports_of(path)
        if any(imp.module == p or imp.module.startswith(p + ".") for p in PRIVATE_DJANGO)
        or (imp.module.startswith("django") and any(n.startswith("_") for n in imp.names))
    ]
    assert offenders == []


def test_no_import_inside_a_function_hides_a_dependency_on_app_code() -> None:
    """An import inside a function hides a cycle from the reader and from this guard. The one exception is
    AppConfig.ready(), where Django says to import what registers itself (checks, tasks)."""
    offenders = [
        f"{path.relative_to(ROOT)}:{imp.line} in {imp.in_function}() imports {imp.module}"
        for path in app_files(*APP_PACKAGES)
        for imp in imports_of(path)
        if imp.in_function is not None
        and is_app(imp.module)
        and not (path.name == "apps.py" and imp.in_function == "ready")
    ]
    assert offenders == []


def test_app_modules_import_no_cycle() -> None:
    modules = {module_name(p): p for p in app_files(*APP_PACKAGES)}
    known = set(modules)
    graph = {
        m: {t for imp in imports_of(p) if is_app(imp.module) for t in targets(imp, known) if t in known and t != m}
        for m, p in modules.items()
    }
    cycles = strongly_connected(graph)
    assert cycles == []


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: the groups of modules that import each other, directly or round about."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return groups


def test_no_module_over_500_lines() -> None:
    long = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for p in app_files(*APP_PACKAGES, "tests")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert long == []


def test_no_app_function_over_60_lines() -> None:
    long = [
        f"{p.relative_to(ROOT)}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1} lines"
        for p in app_files(*APP_PACKAGES)
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


# --- the guards see what they are meant to see --------------------------------------------------------


def test_the_guard_reads_relative_and_inner_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "catalog" / "web"
    package.mkdir(parents=True)
    sample = package / "x.py"
    sample.write_text("from ..services import imports\nimport django.db\n\ndef f():\n    from approvals import tasks\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert [(i.module, i.names, i.in_function) for i in imports_of(sample)] == [
        ("catalog.services", ("imports",), None),
        ("django.db", ("",), None),
        ("approvals", ("tasks",), "f"),
    ]


def test_the_guard_places_modules_in_their_layers() -> None:
    assert layer_of("catalog.domain.manifest.condor") == DOMAIN
    assert layer_of("catalog.rag.domain.text") == DOMAIN
    assert layer_of("catalog.core.audit") == CORE
    assert layer_of("catalog.models.catalog") == CORE
    assert layer_of("catalog.selectors.tool") == SERVICES
    assert layer_of("catalog.cards.services.imports") == SERVICES
    assert layer_of("catalog.web.views.tool") == BOUNDARY
    assert layer_of("approvals.views") == BOUNDARY


def test_the_cycle_finder_finds_a_cycle_round_about() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]


# --- other rules of the house --------------------------------------------------------------------------


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
        if not admin.site.is_registered(model)
    ]
    assert missing == []
