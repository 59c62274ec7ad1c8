"""Catalog manifests: parsing and validating each dialect TOOLS.md describes, as pure functions.

- `base`: the parsed `Manifest`, its sections, `ManifestError`, the column widths, the `Dialect` record;
- `sections`: the top-level sections dialects share (source, baselineCount, teams, ownership, profiles,
  forcedFloors, agents); `tools`: the checks every dialect's tools share (ids, canonical keys, labels);
- `condor` (`condor-catalog/v1`) and `tucan` (`tucan-tools/v1`): one module per dialect, registered in
  `dialects`;
- `load`: bytes → the dialect named by `format` → a `Manifest`, or every located problem.

Callers import from here.
"""

from __future__ import annotations

from catalog.domain.manifest.base import (
    ID_MAX,
    MAX_BASELINE_COUNT,
    NAME_MAX,
    PATH_MAX,
    PROBLEMS_LISTED_MAX,
    SLUG_MAX,
    Agent,
    Dialect,
    ForcedFloor,
    Manifest,
    ManifestError,
    OwnershipRule,
    Profile,
    Team,
)
from catalog.domain.manifest.condor import CONDOR_FORMAT
from catalog.domain.manifest.dialects import DIALECTS
from catalog.domain.manifest.load import load_manifest, manifest_sha256, parse_manifest
from catalog.domain.manifest.tucan import TUCAN_FORMAT, UNDETERMINED_LANGUAGE

__all__ = [
    "CONDOR_FORMAT",
    "DIALECTS",
    "ID_MAX",
    "MAX_BASELINE_COUNT",
    "NAME_MAX",
    "PATH_MAX",
    "PROBLEMS_LISTED_MAX",
    "SLUG_MAX",
    "TUCAN_FORMAT",
    "UNDETERMINED_LANGUAGE",
    "Agent",
    "Dialect",
    "ForcedFloor",
    "Manifest",
    "ManifestError",
    "OwnershipRule",
    "Profile",
    "Team",
    "load_manifest",
    "manifest_sha256",
    "parse_manifest",
]
