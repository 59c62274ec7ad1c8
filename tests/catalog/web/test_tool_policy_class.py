"""The tool page's policyClass row says where the effective class came from: "(fallback: it mutates)" only when
no class is declared and `mutating` made the tool mutate; a read tool without a declared class reads
"(from mutating: false)"; a declared class needs no note."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from catalog.models import Tool

pytestmark = pytest.mark.django_db


def effective_policy_class(client: Client, tool: Tool) -> str:
    """The policyClass row's "Effective" cell, as text."""
    body = client.get(f"/tools/{tool.system}/{tool.declared_id}/").content.decode()
    row = re.search(r'<th scope="row">policyClass</th><td>.*?</td><td>(.*?)</td></tr>', body, re.S)
    assert row is not None
    return " ".join(re.sub(r"<[^>]+>", "", row.group(1)).split())


def test_the_policy_class_row_names_the_fallback_only_where_it_makes_the_tool_mutate(
    demo: None, oncall: Client
) -> None:
    live = Tool.objects.live()
    undeclared_read = live.filter(policy_class__isnull=True, mutating=False).first()
    undeclared_write = live.filter(policy_class__isnull=True, mutating=True).first()
    declared = live.filter(policy_class="read").first()
    assert undeclared_read and undeclared_write and declared

    assert effective_policy_class(oncall, undeclared_read) == "read (from mutating: false)"
    assert effective_policy_class(oncall, undeclared_write) == "mutate (fallback: it mutates)"
    assert effective_policy_class(oncall, declared) == ""


def test_the_notes_read_in_german(demo: None, oncall: Client) -> None:
    oncall.post("/language", {"language": "de", "next": "/"})
    tool = Tool.objects.live().filter(policy_class__isnull=True, mutating=False).first()
    assert tool is not None
    assert effective_policy_class(oncall, tool) == "read (aus mutating: false)"
