"""Schemathesis fuzzes every operation of /api/v1/openapi.json in-process (WSGI) with a token that carries
every scope: no answer may be a 5xx, every 4xx must be a JSON body that says what was wrong, and the schema must
tell the truth: every status, content type, header and body an operation answers is the one it documents, a
request the schema calls invalid is refused and one it calls valid is not (see CONFIG for the checks).

Repeatable in CI: a fixed seed, Hypothesis derandomized, no example database. Run time is bounded by
`max-examples` per operation (the fuzzing phase; the examples and coverage phases add their own few
deterministic cases).

Random text rarely names a tool, a profile or a request that exists, so hooks swap in real ones (from the
demo catalog and six approval requests in every state) two times in three: cases reach allow, suspend,
replay, consume and cancel, not only "unknown". (Schemathesis's own literal mining is off: it overwrote them.)

The long-poll: `GET /approvals/{id}?wait=N` sleeps up to N seconds while a request is pending. A `wait`
inside 1..APPROVALS_LONG_POLL_MAX_SECONDS is sent as 0 (see `_no_long_poll`), so no case sleeps; values
outside that range still go out as generated, so the 422 that refuses them is fuzzed. The long-poll loop
itself is tested in tests/approvals/test_api_lifecycle.py.

What the fuzzer found (a 500 or a 4xx that was not JSON) is pinned in tests/test_api_fuzz_found.py.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core import signals
from django.core.management import call_command
from django.db import close_old_connections
from google.rpc import status_pb2
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.config import SchemathesisConfig

from approvals.services import approval_cancel, approval_decide, approval_evaluate
from catalog.domain.rules import RULES
from catalog.models import ApiToken, CardLocale, CatalogProfile, Team, Tool
from condor_admin.wsgi import application
from tests.conftest import forget_caches, module_transaction

SCOPES = ["catalog:read", "catalog:write", "approvals", "rag", "cards", "telemetry"]
MAX_EXAMPLES = 40  # per operation, fuzzing phase

CONFIG = SchemathesisConfig.from_dict(
    {
        "seed": 20250611,
        "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True, "database": "none"},
        "analysis": {"constants": {"enabled": False}},
        # What this suite promises: no 5xx, a 4xx says what was wrong (below), and the schema tells the truth
        # (tests/test_openapi.py checks that it says enough). Not on: the stateful checks (use_after_free,
        # ensure_resource_availability: the schema declares no links), object_level_authorization (one token, one
        # identity) and max_response_time (timing is not behaviour).
        "checks": {
            "enabled": False,
            "not_a_server_error": {"enabled": True},
            "status_code_conformance": {"enabled": True},
            "content_type_conformance": {"enabled": True},
            "response_headers_conformance": {"enabled": True},
            "response_schema_conformance": {"enabled": True},
            "negative_data_rejection": {"enabled": True},
            "positive_data_acceptance": {"enabled": True},
            "missing_required_header": {"enabled": True},
            "unsupported_method": {"enabled": True},
            "allow_header_conformance": {"enabled": True},
            "ignored_auth": {"enabled": True},
        },
        "operations": [
            {
                # Here a well-formed request can still name what does not exist (a profile, a tool, a manifest's
                # team): a 422 that says so, by design (a refused evaluate must not read as "run it").
                "include-name": [
                    "POST /api/v1/catalog/revisions",
                    "GET /api/v1/catalog/policy",
                    "GET /api/v1/catalog/tools/{system}/{declared_id}/policy",
                    "POST /api/v1/approvals/evaluate",
                    "POST /api/v1/rag/resolve",
                ],
                "checks": {
                    "positive_data_acceptance": {
                        "expected-statuses": ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]
                    }
                },
            }
        ],
    }
)
schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", application, config=CONFIG)


@schema.auth(refresh_interval=None)  # each test makes its own token: nothing to keep between them
class WorldToken:
    """The token of the running test. Given through schemathesis (not as a header of every call), so that a case
    generated without its Authorization header, or with a made-up one, goes out that way. The coverage phase's
    cases are built at collection, before any test has a token: they carry PLACEHOLDER, swapped at the call."""

    def get(self, case: Any, context: Any) -> str:
        return str(WORLD["token"][0]) if WORLD.get("token") else PLACEHOLDER

    def set(self, case: Any, data: str, context: Any) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}


PLACEHOLDER = "the-token-of-the-running-test"


# Values that exist in the database of the running test, so that generated requests also reach the
# paths behind "unknown tool" and "no such request". Filled by the `world` fixture before any case is drawn.
WORLD: dict[str, list[Any]] = {}


def error_says_what_was_wrong(ctx: Any, response: Any, case: Any) -> None:
    """A 4xx is a JSON object with a non-empty `detail` (or a non-empty `errors` list of messages)."""
    if not 400 <= response.status_code < 500:
        return
    content_type = response.headers.get("content-type", [""])[0]
    if content_type == "application/x-protobuf":
        # OTLP/HTTP (the trace export): a refused protobuf export is answered with a protobuf google.rpc.Status,
        # as the OTLP specification requires; it too must say what was wrong.
        status = status_pb2.Status.FromString(response.content)
        assert status.message.strip() and status.code, f"{response.status_code} Status says nothing: {status!r}"
        return
    assert content_type.startswith("application/json"), (
        f"{response.status_code} is not JSON ({content_type or 'no content type'}): {response.text[:200]!r}"
    )
    body = json.loads(response.text)
    assert isinstance(body, dict), f"{response.status_code} body is not a JSON object: {body!r}"
    detail, errors = body.get("detail"), body.get("errors")
    if errors is not None:
        assert isinstance(errors, list) and all(isinstance(e, str) and e.strip() for e in errors), body
    assert (isinstance(detail, str) and detail.strip()) or errors, (
        f"{response.status_code} does not say what was wrong: {body!r}"
    )


def _sometimes(value: Any, key: str, choices: str) -> st.SearchStrategy[Any]:
    """As generated (one time in three), or with `key` replaced by a value that exists (WORLD[choices])."""
    known = WORLD.get(choices)
    if not isinstance(value, dict) or key not in value or not known:
        return st.just(value)
    existing = st.sampled_from(known).map(lambda v: {**value, key: v})
    return st.one_of(existing, existing, st.just(value))


def _chain(value: Any, *steps: tuple[str, str]) -> st.SearchStrategy[Any]:
    strategy: st.SearchStrategy[Any] = st.just(value)
    for key, choices in steps:
        strategy = strategy.flatmap(lambda v, key=key, choices=choices: _sometimes(v, key, choices))
    return strategy


@schema.hook
def flatmap_path_parameters(context: Any, path_parameters: Any) -> st.SearchStrategy[Any]:
    return _chain(
        path_parameters,
        ("request_id", "request_ids"),
        ("system", "systems"),
        ("number", "revision_numbers"),
        ("locale", "locales"),
    )


@schema.hook
def flatmap_query(context: Any, query: Any) -> st.SearchStrategy[Any]:
    return _chain(
        query,
        ("q", "tool_names"),
        ("system", "systems"),
        ("rule", "rules"),
        ("owner", "teams"),
    )


@schema.hook
def flatmap_body(context: Any, body: Any) -> st.SearchStrategy[Any]:
    return _chain(
        body,
        ("tool", "condor_tools"),
        ("profile", "profiles"),
        ("ttlSeconds", "ttls"),
        ("system", "systems"),
        ("argsSha256", "args_sha256"),
    )


def _no_long_poll(case: Any) -> None:
    wait = (case.query or {}).get("wait")
    if isinstance(wait, int) and not isinstance(wait, bool):
        if 0 < wait <= django_settings.APPROVALS_LONG_POLL_MAX_SECONDS:
            case.query["wait"] = 0


def _approval_requests() -> tuple[list[str], list[str]]:
    """Requests in every state the runtime can meet: pending, approved, rejected, cancelled."""
    approver = get_user_model().objects.get(username="approver")
    ids, shas = [], []
    for n, (decision, cancel) in enumerate(
        [(None, False), (None, False), ("approve", False), ("reject", False), (None, True), ("approve", True)]
    ):
        evaluation = approval_evaluate(
            tool_name="prescribeMedication",
            profile="clinical-production",
            dispatch_mode="supervised",
            run_id=f"fuzz-run-{n}",
            requested_by="dr.fuzz",
            patient_ref="pat-1",
            args={"drug": "Amoxicillin", "dose": f"{n}00 mg"},
            idempotency_key=f"fuzz/{n}",
            via="fuzz",
        )
        req = evaluation.request
        assert req is not None, evaluation
        if decision:
            approval_decide(request_id=req.pk, approver=approver, decision=decision, reason="checked")
        if cancel:
            approval_cancel(request_id=req.pk, reason="closed", via="fuzz")
        ids.append(str(req.pk))
        shas.append(req.proposed_sha256)
    return ids, shas


@pytest.fixture(scope="module")
def world_once(django_db_setup: None, django_db_blocker: Any) -> Iterator[dict[str, list[Any]]]:
    """The demo, a token and six approval requests, built once for the module (each operation's test runs in a
    savepoint rolled back to them: tests/conftest.py, `module_transaction`)."""
    with module_transaction(django_db_blocker):
        with django_db_blocker.unblock():
            _build_world()
        yield WORLD


def _build_world() -> None:
    call_command("load_demo", stdout=io.StringIO())
    raw = ApiToken.generate()
    # Owned: once a clinical profile exists, an import by a token without an owner stops at its 403.
    owner = get_user_model().objects.get(username="approver")
    ApiToken.objects.create(name="fuzz", prefix=raw[:10], token_hash=ApiToken.hash(raw), scopes=SCOPES, owner=owner)
    request_ids, shas = _approval_requests()
    tools = list(Tool.objects.values_list("system", "declared_id", "llm_name"))
    WORLD.clear()
    WORLD.update(
        token=[raw],
        request_ids=request_ids,
        args_sha256=shas,
        systems=["condor", "tucan"],
        tool_names=sorted({name for _, *names in tools for name in names}),
        # Evaluate under a condor profile: condor's tools (TUCAN's are refused there before anything else).
        condor_tools=sorted({name for system, *names in tools if system == "condor" for name in names}),
        revision_numbers=[1, 2],
        ttls=[None, 60, 900],
        profiles=sorted(set(CatalogProfile.objects.values_list("slug", flat=True))),
        rules=sorted(RULES),
        teams=[*Team.objects.order_by("slug").values_list("slug", flat=True), "-"],
        locales=[*CardLocale.objects.order_by("code").values_list("code", flat=True), "de-AT", "en-GB"],
    )


@pytest.fixture
def world(world_once: dict[str, list[Any]], db: Any) -> Iterator[dict[str, list[Any]]]:
    forget_caches()  # the in-process indexes: the module's catalog, not what an earlier operation's test left
    # The real WSGI handler closes the connection after each request, which would end the test's
    # transaction (on PostgreSQL; SQLite's in-memory test database ignores it). Django's test client
    # disconnects the same receiver for the same reason.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield world_once
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_operation_answers_without_5xx_and_explains_every_4xx(case: Any, world: dict[str, list[Any]]) -> None:
    _no_long_poll(case)
    if (case.headers or {}).get("Authorization") == f"Bearer {PLACEHOLDER}":
        case.headers["Authorization"] = f"Bearer {world['token'][0]}"
    case.call_and_validate(additional_checks=[error_says_what_was_wrong])
