"""The OpenAPI document tells the truth and says enough (/api/v1/openapi.json, what a client generator reads).

Every operation documents each answer it can give with the JSON error shape (the bearer check's 401 and 403, the
422 of invalid input, the 404 of a path that misses, the 413 of a body over the cap, the 400 of a body that is
not JSON, the 503 of a database that is away), and every bound the code enforces on what enters: each string
and list has a maximum, each integer a maximum or a documented clamp. The other direction, that each documented
bound is enforced, is checked here parameter by parameter and, for bodies too, by the fuzzer's negative cases
(tests/test_api_fuzz.py, which also checks every answer against its documented schema).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, get_args
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.test import Client
from ninja import Router
from pydantic import BaseModel

import condor_admin.api as wiring
from catalog.api.findings import FINDINGS_MAX_LIMIT
from catalog.api.revisions import REVISIONS_MAX_LIMIT

SCOPES = ("catalog:read", "catalog:write", "approvals", "rag", "cards")
BOUNDS = ("maxLength", "maximum", "maxItems", "enum", "const", "minimum", "minLength", "pattern")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    response = Client().get("/api/v1/openapi.json")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def test_the_document_has_no_key_twice_in_one_object() -> None:
    """Swagger UI reads the document as YAML, where a repeated key (an int status and its string) is fatal."""
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        repeated.extend(sorted({key for key in keys if keys.count(key) > 1}))
        return dict(items)

    json.loads(Client().get("/api/v1/openapi.json").content, object_pairs_hook=pairs)
    assert repeated == []


def operations(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            yield f"{method.upper()} {path}", operation


def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def error_shape_problem(document: dict[str, Any], answer: dict[str, Any] | None) -> str | None:
    """None when the answer is JSON with the common error shape: `detail` (a string, always), `errors` (strings)."""
    if answer is None:
        return "not documented"
    media = answer.get("content", {}).get("application/json")
    if media is None:
        return "no JSON body documented"
    schema = resolve(document, media["schema"])
    props = schema.get("properties", {})
    if props.get("detail", {}).get("type") != "string" or "detail" not in schema.get("required", []):
        return f"no required string `detail` in {schema.get('title')}"
    if props.get("errors", {}).get("items", {}).get("type") != "string":
        return f"no `errors` list of strings in {schema.get('title')}"
    return None


def expected_errors(operation: dict[str, Any], label: str) -> set[int]:
    """The error answers this operation must document, from what it takes."""
    expected = {422, 503}  # invalid input (any query string can carry a NUL); the database away
    if operation.get("security"):
        expected |= {401, 403}
    if any(p["in"] == "path" for p in operation.get("parameters", [])):
        expected.add(404)
    if label.startswith(("POST", "PUT", "PATCH")):
        expected.add(413)
    if "$ref" in operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {}):
        expected.add(400)  # a body ninja parses: not JSON is its 400
    return expected


def test_every_operation_documents_each_error_answer_with_the_json_error_shape(document: dict[str, Any]) -> None:
    problems = []
    for label, operation in operations(document):
        assert operation.get("security"), f"{label}: every operation takes a bearer token"
        for status in sorted(expected_errors(operation, label)):
            problem = error_shape_problem(document, operation["responses"].get(str(status)))
            if problem:
                problems.append(f"{label} {status}: {problem}")
    assert not problems, "\n".join(problems)


def test_every_documented_error_answer_is_the_json_error_shape(document: dict[str, Any]) -> None:
    problems = [
        f"{label} {status}: {problem}"
        for label, operation in operations(document)
        for status, answer in operation["responses"].items()
        if int(status) >= 400 and (problem := error_shape_problem(document, answer))
    ]
    assert not problems, "\n".join(problems)


def test_answers_document_the_headers_they_carry(document: dict[str, Any]) -> None:
    for label, operation in operations(document):
        answers = operation["responses"]
        assert answers["401"]["headers"]["WWW-Authenticate"]["required"], label
        assert "Retry-After" in answers["503"]["headers"], label
        if "304" in answers:  # conditional GETs: the ETag is what makes a 304 possible
            assert answers["200"]["headers"]["ETag"]["required"] and answers["304"]["headers"]["ETag"], label


# --- every bound the code enforces is in the schema ----------------------------------------------------------


def unbounded(document: dict[str, Any], schema: dict[str, Any], where: str, note: str = "") -> Iterator[str]:
    """Each place in an input schema that takes a string, list or integer without a documented bound.

    A free-form object (tool arguments, a manifest) is bounded by bytes: its description must say how many."""
    schema = resolve(document, schema)
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key, []):
            # A bound beside anyOf applies to each branch (ttlSeconds: integer or null, 30..86400).
            inherited = {k: v for k, v in schema.items() if k in BOUNDS}
            yield from unbounded(document, {**inherited, **resolve(document, branch)}, where, note)
    kind = schema.get("type")
    described = f"{note} {schema.get('description', '')}"
    if schema.keys() & {"enum", "const"} or kind in (None, "boolean", "null", "number"):
        return
    free_form = "properties" not in schema or schema.get("additionalProperties") not in (None, False)
    if kind == "string" and "maxLength" not in schema:
        yield f"{where}: a string without maxLength"
    elif kind == "integer" and "maximum" not in schema and "clamped" not in described:
        yield f"{where}: an integer without maximum (or a documented clamp)"
    elif kind == "array":
        if "maxItems" not in schema:
            yield f"{where}: a list without maxItems"
        yield from unbounded(document, schema.get("items", {}), f"{where}[]")
    elif kind == "object":
        if free_form and "bytes" not in described:
            yield f"{where}: a free-form object without a documented size in bytes"
        for name, prop in schema.get("properties", {}).items():
            yield from unbounded(document, prop, f"{where}.{name}")


def test_every_input_has_a_documented_bound(document: dict[str, Any]) -> None:
    problems = []
    for label, operation in operations(document):
        for param in operation.get("parameters", []):
            problems += unbounded(document, param["schema"], f"{label} {param['in']}.{param['name']}")
        body = operation.get("requestBody")
        if body:
            schema = body["content"]["application/json"]["schema"]
            problems += unbounded(document, schema, f"{label} body", body.get("description", ""))
    assert not problems, "\n".join(problems)


def param(document: dict[str, Any], label: str, name: str) -> dict[str, Any]:
    method, path = label.split(" ", 1)
    found = [p for p in document["paths"][path][method.lower()]["parameters"] if p["name"] == name]
    assert found, f"{label} has no parameter {name}"
    return found[0]


def body_property(document: dict[str, Any], label: str, name: str) -> dict[str, Any]:
    method, path = label.split(" ", 1)
    body = document["paths"][path][method.lower()]["requestBody"]["content"]["application/json"]["schema"]
    prop: dict[str, Any] = resolve(document, body)["properties"][name]
    return prop


def test_the_schema_states_the_limits_the_code_applies(document: dict[str, Any]) -> None:
    """The numbers come from the same settings and constants the code checks against."""
    findings = "GET /api/v1/catalog/findings"
    assert param(document, findings, "offset")["schema"]["maximum"] == 1_000_000
    assert f"above {FINDINGS_MAX_LIMIT} is clamped" in param(document, findings, "limit")["description"]
    revisions = param(document, "GET /api/v1/catalog/revisions", "limit")
    assert f"above {REVISIONS_MAX_LIMIT} is clamped" in revisions["description"]
    wait = param(document, "GET /api/v1/approvals/{request_id}", "wait")["schema"]
    assert (wait["minimum"], wait["maximum"]) == (0, settings.APPROVALS_LONG_POLL_MAX_SECONDS)
    ttl = body_property(document, "POST /api/v1/approvals/evaluate", "ttlSeconds")
    assert (ttl["minimum"], ttl["maximum"]) == (
        settings.APPROVALS_TTL_MIN_SECONDS,
        max(settings.APPROVALS_TTL_MAX_SECONDS.values()),
    )
    args = body_property(document, "POST /api/v1/approvals/evaluate", "args")
    assert f"at most {settings.APPROVALS_MAX_ARGS_BYTES} bytes" in args["description"]
    top_k = body_property(document, "POST /api/v1/rag/resolve", "topK")["anyOf"][0]
    assert top_k["maximum"] == settings.CONDOR_RAG_MAX_TOP_K
    manifest = document["paths"]["/api/v1/catalog/revisions"]["post"]["requestBody"]
    assert f"at most {settings.CONDOR_MAX_MANIFEST_BYTES} bytes" in manifest["description"]
    otlp = document["paths"]["/api/v1/otlp/v1/traces"]["post"]
    assert f"at most {settings.CONDOR_OTLP_MAX_BYTES} bytes" in otlp["requestBody"]["description"]
    assert f"({settings.CONDOR_OTLP_MAX_BYTES} bytes here)" in otlp["responses"]["413"]["description"]
    own_caps = ("POST /api/v1/catalog/revisions", "POST /api/v1/otlp/v1/traces")
    for label, operation in operations(document):
        if "413" in operation["responses"] and label not in own_caps:
            assert f"({settings.CONDOR_MAX_REQUEST_BYTES} bytes" in operation["responses"]["413"]["description"]


# --- every documented bound is enforced (query and path; bodies: the fuzzer's negative cases) ----------------


def a_valid_value(schema: dict[str, Any]) -> str:
    schema = next(iter(schema.get("anyOf", [])), schema)
    if "enum" in schema:
        return str(next(v for v in schema["enum"] if v))
    return str(schema.get("minimum", 1)) if schema.get("type") == "integer" else "x"


def out_of_bounds(document: dict[str, Any]) -> Iterator[tuple[str, str, str, str]]:
    """(label, parameter, value, url) for one value past each documented bound of each query or path parameter."""
    for label, operation in operations(document):
        params = operation.get("parameters", [])
        for target in params:
            schema = next(iter(target["schema"].get("anyOf", [])), target["schema"])
            schema = {**schema, **{k: v for k, v in target["schema"].items() if k in BOUNDS}}
            over = []
            if "maxLength" in schema:
                over.append("x" * (schema["maxLength"] + 1))
            if "maximum" in schema:
                over.append(str(schema["maximum"] + 1))
            if "minimum" in schema:
                over.append(str(schema["minimum"] - 1))
            for value in over:
                values = {p["name"]: a_valid_value(p["schema"]) for p in params if p["required"]}
                values[target["name"]] = value
                path = label.split(" ", 1)[1]
                for name, v in values.items():
                    path = path.replace("{" + name + "}", v)
                query = {p["name"]: values[p["name"]] for p in params if p["in"] == "query" and p["name"] in values}
                yield label, target["name"], value, f"{path}?{urlencode(query)}"


def test_each_documented_parameter_bound_is_enforced(document: dict[str, Any], db: None, make_token: Any) -> None:
    client = Client(headers={"Authorization": f"Bearer {make_token('bounds', scopes=SCOPES)}"})
    cases = list(out_of_bounds(document))
    assert len(cases) >= 15, cases  # every operation's bounded parameters, not a few
    for label, name, value, url in cases:
        method = label.split(" ")[0].lower()
        response = client.get(url) if method == "get" else getattr(client, method)(url, content_type="application/json")
        assert response.status_code == 422, f"{label} {name}={value[:20]}: {response.status_code}"
        assert name in response.content.decode(), f"{label}: the refusal does not name {name}: {response.content!r}"


# --- the schema's names --------------------------------------------------------------------------------------


def models_of(annotation: Any, seen: set[type[BaseModel]]) -> None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation not in seen:
        seen.add(annotation)
        for field in annotation.model_fields.values():
            models_of(field.annotation, seen)
    for arg in get_args(annotation):
        models_of(arg, seen)


def test_no_two_schemas_of_the_api_share_a_name() -> None:
    """Components are keyed by class name: of two classes with one name, one silently stands in for the other
    (four ErrorOut classes did: approvals' refusals were documented as a bare `detail`)."""
    seen: set[type[BaseModel]] = set()
    routers = [r for r in vars(wiring).values() if isinstance(r, Router)]
    for router in routers:
        for path_view in router.path_operations.values():
            for operation in path_view.operations:
                for model in [*operation.response_models.values(), *operation.models]:
                    if model is not None:
                        models_of(model, seen)
    names = [m.__name__ for m in seen if m.__name__ != "NinjaResponseSchema" and not m.__name__.endswith("Params")]
    assert len(routers) >= 7 and len(names) > 20
    assert sorted(n for n in set(names) if names.count(n) > 1) == []


def test_a_401_names_the_bearer_scheme(client: Client) -> None:
    response = client.get("/api/v1/catalog/findings")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert response.json() == {"detail": "missing, unknown, expired or revoked bearer token"}
