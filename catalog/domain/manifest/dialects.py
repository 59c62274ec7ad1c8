"""The manifest dialects, by their `format` string.

A new dialect is one module beside these (its parser and `DIALECT = Dialect(...)`), registered here: the
import of its `DIALECT` and its entry in the tuple.
"""

from __future__ import annotations

from catalog.domain.manifest.base import Dialect
from catalog.domain.manifest.condor import DIALECT as CONDOR
from catalog.domain.manifest.mcp import DIALECT as MCP
from catalog.domain.manifest.tucan import DIALECT as TUCAN

DIALECTS: dict[str, Dialect] = {d.format: d for d in (CONDOR, TUCAN, MCP)}
