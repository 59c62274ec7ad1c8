from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from catalog.api.owners import lookup_body
from catalog.selectors.owners import owner_lookup


class Command(BaseCommand):
    help = "Who owns a tool? Give any spelling (camelCase, snake_case, kebab-case, dotted, an alias, a near miss)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", nargs="+", help="the tool id as you have it; several words are joined")
        parser.add_argument("--json", action="store_true", help="print the API's JSON answer")

    def handle(self, *args: Any, name: list[str], json: bool, **options: Any) -> None:
        query = " ".join(name)
        result = owner_lookup(query)
        if json:
            self.stdout.write(_dumps(lookup_body(result)))
        elif result.matches:
            for tool, how in result.matches:
                self.stdout.write(f"{tool.system}:{tool.declared_id}  (matched by {how})")
                if tool.owner:
                    o = tool.owner
                    self.stdout.write(f"  team        {o.name} [{o.slug}]")
                    self.stdout.write(f"  on call     {o.oncall}")
                    self.stdout.write(f"  channel     {o.channel}")
                    self.stdout.write(f"  escalation  {o.escalation}")
                else:
                    self.stdout.write(f"  UNOWNED: no ownership rule matches {tool.plane}/{tool.module}")
        else:
            self.stdout.write(f"no tool is called {query!r} (canonical key {result.key!r})")
            for tool, score in result.candidates:
                owner = f"{tool.owner.name} {tool.owner.oncall}" if tool.owner else "UNOWNED"
                self.stdout.write(f"  did you mean {tool.system}:{tool.declared_id}  ({score:.0f}%)  → {owner}")
        if not result.matches:
            sys.exit(1)


def _dumps(body: dict[str, object]) -> str:
    return json.dumps(body, indent=1, ensure_ascii=False)
