"""/catalog/export.csv against formula injection: whatever a stored tool holds reaches the spreadsheet as text.

Imports now refuse such ids and modules (their character set), so the rows are written as a catalog imported
before that rule still holds them: the export is the second guard and must not rely on the first."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from django.test import Client

from catalog.models import Tool
from tests.conftest import signed_import

pytestmark = pytest.mark.django_db

HYPERLINK = '=HYPERLINK("http://evil.example","x")'
MODULES = {"hyperlinkTool": HYPERLINK, "ddeTool": "+cmd|' /C calc'!A0", "sumTool": "@SUM(1+1)", "minusTool": "-2+3"}


def test_formula_cells_in_the_csv_export_are_neutralised_and_the_json_keeps_them_as_declared(
    manifests: Any, make_user: Any
) -> None:
    m = manifests
    tools = [m.condor_tool(tool_id) for tool_id in [*MODULES, "listActiveMedications"]]
    signed_import(m.encode(m.condor(tools, forcedFloors=[])))
    for tool_id, module in MODULES.items():
        Tool.objects.filter(declared_id=tool_id).update(module=module)
    Tool.objects.filter(declared_id="sumTool").update(declared_id=HYPERLINK)  # the id the review reproduced
    client = Client()
    client.force_login(make_user("oscar", "on-call"))

    response = client.get("/catalog/export.csv")
    text = b"".join(response.streaming_content).decode()
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    assert len(cells) > 5 * 19 and not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    rows = {row["declared_id"]: row for row in csv.DictReader(io.StringIO(text))}
    assert {tool_id: rows[tool_id]["module"] for tool_id in ("hyperlinkTool", "ddeTool", "minusTool")} == {
        "hyperlinkTool": "'" + HYPERLINK,
        "ddeTool": "'+cmd|' /C calc'!A0",
        "minusTool": "'-2+3",
    }
    assert rows["'" + HYPERLINK]["module"] == "'@SUM(1+1)"  # the id is a cell like any other
    assert rows["listActiveMedications"]["module"] == "medication"  # plain text is untouched
    assert rows["hyperlinkTool"]["owner"] == "meds" and rows["hyperlinkTool"]["mutating"] == "False"
    # JSON is data, not a spreadsheet: it keeps the declared value.
    exported = {row["declared_id"]: row for row in json.loads(client.get("/catalog/export.json").content)}
    assert exported["hyperlinkTool"]["module"] == HYPERLINK
