"""Hypothesis feeds the importer mutated manifests: each one is either imported, or refused with every
problem located (`tools[3].hitlTier: …`) and the database exactly as it was.

The manifests start valid (the small condor and TUCAN manifests of tests/conftest.py) and are mutated one
to three times: keys dropped, values of the wrong type, unknown keys, duplicated list items (ids), huge
strings and numbers, unknown enum values, nested garbage, text no database column can hold (NUL, a lone
surrogate), and at the byte level: invalid JSON, non-UTF-8 bytes, deep nesting. Some mutations are valid
changes, so accepted imports (diffs, retirements, revivals) are fuzzed as well: the database carries the
accepted ones from example to example.

"Exactly as it was" is a dump of every table of the catalog app, the audit log included, before and after.
Repeatable: derandomized Hypothesis, no example database.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core import serializers
from django.test import Client
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from catalog.domain.manifest import ID_MAX, NAME_MAX, PATH_MAX, SLUG_MAX, ManifestError
from catalog.models import ApiToken
from catalog.services.imports import catalog_import
from tests.conftest import condor_manifest, condor_tool, mutate_tool, tucan_manifest, tucan_tool

# Fixed examples in CI: derandomized, nothing replayed from an example database, no deadline (imports vary).
# The `seeded` database is set up once per test, not per example: hence the function-scoped-fixture check.
REPEATABLE = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

# A problem starts with its JSON location: `$`, or a path of keys and indexes (`tools[3].hitlTier`).
# Keys this file invents use KEY_ALPHABET, so a location never holds ": " by accident.
KEY_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
LOCATED = re.compile(r"^(\$|[\w-]+(\[\d+\])*(\.[\w-]+(\[\d+\])*)*): \S")


def condor_base() -> dict[str, Any]:
    return condor_manifest(
        [
            mutate_tool("prescribeMedication", aliases=["medication.prescribe"]),
            mutate_tool("createInvoiceDraft", module="billing", policyDomain="billing", hitlTier="low"),
            condor_tool("listActiveMedications", instructionFragment="Say which list.", metadataRef="meta/list"),
            condor_tool("searchTools", plane="planner-control", module="search", policyDomain=None),
            condor_tool("showDemoBanner", availability="demo-only", stylingFragment="use the accent token"),
        ]
    )


def tucan_base() -> dict[str, Any]:
    prescription = tucan_tool("create-prescription", "medications", mutating=True)
    prescription["inputSchema"] = {
        "type": "object",
        "properties": {"pzn": {"type": "string", "pattern": "^[0-9]{8}$"}},
        "required": ["pzn"],
    }
    return tucan_manifest([tucan_tool("show-modal"), prescription, tucan_tool("list-notes", "notes")])


BASES: list[Callable[[], dict[str, Any]]] = [condor_base, tucan_base]

# --- values ------------------------------------------------------------------------------------------

UNSTORABLE = ["\x00", "nul\x00inside", "\ud800", "lone \udfff surrogate", "\ud83d"]
ODD_TEXT = ["", " ", "\u202eevil", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "#fff", "rgb(1,2,3)", "---", "...", "ä" * 300]
HUGE_NUMBERS = [2**31, 2**63, 2**64, -(2**63) - 1, 10**30, 1e308, -1, 0.5]

odd_text = st.sampled_from(UNSTORABLE + ODD_TEXT) | st.integers(10_000, 300_000).map(lambda n: "x" * n)
leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    odd_text,
    st.sampled_from(HUGE_NUMBERS),
)
garbage = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(KEY_ALPHABET, min_size=1, max_size=8), children)
    ),
    max_leaves=10,
)


# --- mutations of the parsed document -------------------------------------------------------------

Path = tuple[str | int, ...]


def nodes(doc: Any, path: Path = ()) -> list[Path]:
    """Every path below the root, depth first."""
    found: list[Path] = []
    children = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else []
    for key, child in children:
        found.append((*path, key))
        found.extend(nodes(child, (*path, key)))
    return found


def at(doc: Any, path: Path) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def containers(doc: Any, kind: type) -> list[Path]:
    return [p for p in [(), *nodes(doc)] if isinstance(at(doc, p), kind)]


def drop_key(draw: Any, doc: Any) -> None:
    paths = [p for p in nodes(doc) if isinstance(at(doc, p[:-1]), dict)]
    if paths:
        path = draw(st.sampled_from(paths))
        del at(doc, path[:-1])[path[-1]]


def replace_value(draw: Any, doc: Any) -> None:
    paths = nodes(doc)
    if paths:
        path = draw(st.sampled_from(paths))
        at(doc, path[:-1])[path[-1]] = draw(garbage)


def unknown_key(draw: Any, doc: Any) -> None:
    path = draw(st.sampled_from(containers(doc, dict)))
    at(doc, path)[draw(st.text(KEY_ALPHABET, min_size=1, max_size=10))] = draw(garbage)


def duplicate_item(draw: Any, doc: Any) -> None:
    paths = [p for p in containers(doc, list) if at(doc, p)]
    if paths:
        items = at(doc, draw(st.sampled_from(paths)))
        items.append(copy.deepcopy(draw(st.sampled_from(items))))


def odd_string(draw: Any, doc: Any) -> None:
    paths = [p for p in nodes(doc) if isinstance(at(doc, p), str)]
    if paths:
        path = draw(st.sampled_from(paths))
        at(doc, path[:-1])[path[-1]] = draw(odd_text | st.text())


def odd_number(draw: Any, doc: Any) -> None:
    doc["baselineCount"] = draw(st.sampled_from(HUGE_NUMBERS))


def bad_enum(draw: Any, doc: Any) -> None:
    enums = ("plane", "availability", "retryClass", "idempotency", "policyClass", "hitlTier", "trigger", "format")
    paths = [p for p in nodes(doc) if p[-1] in enums]
    if paths:
        path = draw(st.sampled_from(paths))
        at(doc, path[:-1])[path[-1]] = draw(st.sampled_from(["", "HIGH", "mutating", "preview ", "null"]) | st.text())


DEEP = "__deeply_nested__"


def deep_value(draw: Any, doc: Any) -> None:
    """Somewhere (an inputSchema is the natural place), arrays nested hundreds or thousands deep."""
    paths = [p for p in nodes(doc) if p[-1] == "inputSchema"] or nodes(doc)
    path = draw(st.sampled_from(paths))
    at(doc, path[:-1])[path[-1]] = DEEP  # json.dumps cannot write it: as_sent splices the bytes in


def valid_change(draw: Any, doc: Any) -> None:
    """A change the importer must accept: the accepted path (diffs, retire, revive) gets fuzzed too."""
    tools = doc.get("tools")
    if not isinstance(tools, list) or not tools:
        return
    i = draw(st.integers(0, len(tools) - 1))
    tool = tools[i]
    if not isinstance(tool, dict):
        return
    change = draw(st.sampled_from(["retire", "describe", "rename", "availability", "keywords"]))
    if change == "retire" and len(tools) > 1:
        del tools[i]
        _forget_references(doc, tool.get("id"))
    elif change == "describe":
        text = draw(st.text(max_size=200) | st.sampled_from(ODD_TEXT))  # storable, unlike UNSTORABLE
        (tool.get("metadata") if isinstance(tool.get("metadata"), dict) else tool)["ragDescription"] = text
    elif change == "rename" and isinstance(tool.get("id"), str):
        old = tool["id"]
        tool["id"] = old + draw(st.sampled_from(["V2", "-next", "Beta"]))
        tool.pop("aliases", None)
        _forget_references(doc, old)
    elif change == "availability" and "availability" in tool and doc.get("format") == "condor-catalog/v1":
        tool["availability"] = draw(st.sampled_from(["production", "preview"]))
        _forget_references(doc, tool.get("id"))
    elif change == "keywords" and "ragKeywords" in tool:
        tool["ragKeywords"] = {"en": draw(st.lists(st.text(max_size=20), max_size=3))}


def _forget_references(doc: dict[str, Any], tool_id: Any) -> None:
    """Keep floors and profiles valid after a tool left (as far as earlier mutations left them lists)."""
    for section, key in (("forcedFloors", "tools"), ("profiles", "include")):
        for item in doc.get(section) if isinstance(doc.get(section), list) else []:
            if isinstance(item, dict) and isinstance(item.get(key), list):
                item[key] = [t for t in item[key] if t != tool_id]


MUTATIONS = [
    drop_key,
    replace_value,
    unknown_key,
    duplicate_item,
    odd_string,
    odd_number,
    bad_enum,
    deep_value,
    valid_change,
    valid_change,
]

# --- mutations of the bytes -----------------------------------------------------------------------


def as_sent(draw: Any, doc: Any) -> bytes:
    raw = json.dumps(doc).encode("utf-8")  # ensure_ascii: NUL and lone surrogates travel as \u escapes
    if DEEP.encode() in raw:
        depth = draw(st.sampled_from([50, 900, 990, 3_000]))
        raw = raw.replace(f'"{DEEP}"'.encode(), b"[" * depth + b"]" * depth)
    kind = draw(st.sampled_from(["json"] * 8 + ["truncate", "bad-utf8", "not-json", "deep", "bom", "pretty"]))
    if kind == "truncate":
        return raw[: draw(st.integers(0, max(0, len(raw) - 1)))]
    if kind == "bad-utf8":
        i = draw(st.integers(0, len(raw)))
        return raw[:i] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"])) + raw[i:]
    if kind == "not-json":
        return draw(st.sampled_from([b"", b"null", b"[]", b'"text"', b"NaN", b"{nope", b"{'format': 1}"]) | st.binary())
    if kind == "deep":
        depth = draw(st.sampled_from([100, 5_000, 200_000]))
        return b'{"format": "condor-catalog/v1", "tools": ' + b"[" * depth + b"]" * depth + b"}"
    if kind == "bom":
        return b"\xef\xbb\xbf" + raw
    if kind == "pretty":  # the same document, other bytes: a new sha256, so it is parsed again
        return json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return raw


@st.composite
def manifests(draw: Any) -> bytes:
    doc = draw(st.sampled_from(BASES))()
    for _ in range(draw(st.integers(1, 3))):
        draw(st.sampled_from(MUTATIONS))(draw, doc)
    return as_sent(draw, doc)


# --- the property --------------------------------------------------------------------------------


def catalog_dump() -> dict[str, str]:
    """Every row of every table of the catalog app (tools, revisions, config, findings, audit log …)."""
    return {
        model._meta.label: serializers.serialize("json", model.objects.order_by("pk"))
        for model in apps.get_app_config("catalog").get_models()
    }


TOKEN = "cnd_fuzz-import-token-for-tests-only"


@pytest.fixture
def seeded(db: Any) -> None:
    """Both systems imported once, so a refused manifest has something to leave alone; and a catalog token."""
    for base in BASES:
        catalog_import(raw=json.dumps(base()).encode(), via="seed")
    issuer = get_user_model().objects.get_or_create(username="fuzz-issuer")[0]
    ApiToken.objects.create(
        name="fuzz", prefix=TOKEN[:10], token_hash=ApiToken.hash(TOKEN), scopes=["catalog:write"], owner=issuer
    )


@settings(REPEATABLE, max_examples=150)
@given(raw=manifests())
def test_a_mutated_manifest_is_imported_or_refused_with_located_errors_changing_nothing(
    seeded: None, raw: bytes
) -> None:
    before = catalog_dump()
    try:
        result = catalog_import(raw=raw, via="fuzz")
    except ManifestError as refused:
        event("refused")  # pytest --hypothesis-show-statistics shows the split
        assert refused.problems, "refused without saying why"
        unlocated = [p for p in refused.problems if not LOCATED.match(p)]
        assert not unlocated, f"problems without a JSON location: {unlocated[:3]}"
        assert catalog_dump() == before, "a refused manifest changed the database"
        return
    event("accepted, unchanged" if result.unchanged else "accepted")
    assert result.revision is not None
    # Accepted: the same bytes again change nothing.
    after = catalog_dump()
    assert catalog_import(raw=raw, via="fuzz").unchanged
    assert catalog_dump() == after


@settings(REPEATABLE, max_examples=40)
@given(raw=manifests())
def test_the_import_api_answers_every_mutated_manifest_in_json(seeded: None, raw: bytes) -> None:
    """The same manifests through POST /api/v1/catalog/revisions (Schemathesis sends it random objects only):
    201/200, or a 4xx whose JSON lists the located problems."""
    client = Client(headers={"Authorization": f"Bearer {TOKEN}"}, raise_request_exception=False)
    before = catalog_dump()
    response = client.post("/api/v1/catalog/revisions", raw, content_type="application/json")
    before.pop("catalog.ApiToken")  # the token's last use is written; it is not the catalog
    assert response.status_code in (200, 201, 422), response.content[:300]
    body = response.json()
    if response.status_code == 422:
        assert body["detail"] and body["errors"] and all(LOCATED.match(p) for p in body["errors"]), body
        after = catalog_dump()
        after.pop("catalog.ApiToken")
        assert after == before


# --- what the fuzzer found (each was an exception out of catalog_import: a 500 from the API) ---------


def refused(raw: bytes) -> list[str]:
    with pytest.raises(ManifestError) as caught:
        catalog_import(raw=raw, via="test")
    return caught.value.problems


def test_a_format_that_is_not_a_string_is_refused(seeded: None) -> None:
    raw = json.dumps({**condor_base(), "format": ["condor-catalog/v1"]}).encode()
    assert refused(raw) == [
        "format: unknown manifest format ['condor-catalog/v1'];"
        " expected one of condor-catalog/v1, mcp-tools/v1, tucan-tools/v1"
    ]


def test_text_no_column_can_hold_is_refused_where_it_is(seeded: None) -> None:
    manifest = condor_base()
    manifest["tools"][2]["ragDescription"] = "USE WHEN: \ud800"  # UnicodeEncodeError on insert and hashing
    manifest["teams"][0]["oncall"] = "@meds\x00"  # PostgreSQL text refuses NUL
    manifest["tools"][0]["ragKeywords"]["\x00"] = ["x"]
    before = catalog_dump()
    assert refused(json.dumps(manifest).encode()) == [
        "teams[0].oncall: contains a NUL character (\\u0000), which cannot be stored; remove it",
        "tools[0].ragKeywords: the key '\\x00' contains a NUL character (\\u0000), which cannot be stored; remove it",
        "tools[2].ragDescription: contains a lone UTF-16 surrogate, which is not Unicode text; send valid UTF-8",
    ]
    assert catalog_dump() == before


def test_nesting_too_deep_to_read_is_refused(seeded: None) -> None:
    raw = b'{"format": "tucan-tools/v1", "tools": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"  # RecursionError
    assert refused(raw) == ["$: arrays or objects nested too deeply to read; no manifest nests like that"]


def test_a_baseline_count_too_large_to_store_is_refused(seeded: None) -> None:
    raw = json.dumps({**condor_base(), "baselineCount": 2**63}).encode()  # overflowed the integer column
    assert refused(raw) == [f"baselineCount: expected at most 2147483647, got {2**63}"]


def test_text_longer_than_its_column_is_refused_where_it_is(seeded: None) -> None:
    """PostgreSQL enforces varchar widths (SQLite does not): these were 500s there."""
    manifest = condor_base()
    manifest["teams"][0]["name"] = "n" * 201
    manifest["tools"][1]["module"] = "m" * 101
    manifest["tools"][3]["id"] = "aB" * 80  # 160 characters, 240 as the canonical key a.ba.ba…b
    before = catalog_dump()
    assert refused(json.dumps(manifest).encode()) == [
        "teams[0].name: at most 200 characters, got 201",
        "tools[1].module: at most 100 characters, got 101 (tool createInvoiceDraft)",
        "tools[3].id: at most 200 characters in canonical form, got 240 (tool " + "aB" * 80 + ")",
    ]
    assert catalog_dump() == before


@pytest.mark.parametrize(
    ("model", "field", "limit"),
    [
        ("Tool", "declared_id", ID_MAX),
        ("Tool", "canonical_key", ID_MAX),
        ("Tool", "llm_name", ID_MAX),
        ("ToolChange", "declared_id", ID_MAX),
        ("Tool", "module", SLUG_MAX),
        ("Tool", "category", SLUG_MAX),
        ("Tool", "policy_domain", SLUG_MAX),
        ("Tool", "metadata_ref", PATH_MAX),
        ("Tool", "source_path", PATH_MAX),
        ("Team", "slug", SLUG_MAX),
        ("Team", "name", NAME_MAX),
        ("Team", "oncall", NAME_MAX),
        ("Team", "channel", NAME_MAX),
        ("OwnershipRule", "module", SLUG_MAX),
        ("CatalogProfile", "slug", SLUG_MAX),
        ("ForcedFloor", "slug", SLUG_MAX),
        ("Agent", "slug", SLUG_MAX),
        ("CatalogRevision", "source_repository", NAME_MAX),
        ("CatalogRevision", "source_commit", SLUG_MAX),
    ],
)
def test_the_manifest_length_limits_are_the_column_widths(model: str, field: str, limit: int) -> None:
    assert apps.get_model("catalog", model)._meta.get_field(field).max_length == limit
