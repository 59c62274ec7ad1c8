"""The FHIR R4 status value sets that cards show, and coverage: which codes have a label per locale.

The code lists and English displays are HL7's (CC0), copied into `data/fhir_r4_status.json` so nothing is
fetched at run time. A status card string labels one code: key `<keyPrefix>.<code>`, e.g.
`status.medicationrequest.on-hold`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA_FILE = Path(__file__).resolve().parent / "data" / "fhir_r4_status.json"


@dataclass(frozen=True)
class Code:
    code: str
    display: str
    definition: str = ""
    parent: str = ""


@dataclass(frozen=True)
class ValueSet:
    id: str
    url: str
    title: str
    version: str
    code_system: str
    bound_elements: tuple[str, ...]
    key_prefix: str
    codes: tuple[Code, ...]

    def key_for(self, code: str) -> str:
        return f"{self.key_prefix}.{code}"

    def code(self, code: str) -> Code | None:
        return next((c for c in self.codes if c.code == code), None)

    @property
    def elements(self) -> str:
        return ", ".join(self.bound_elements)


@cache
def value_sets() -> dict[str, ValueSet]:
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    return {
        vid: ValueSet(
            id=vid,
            url=v["url"],
            title=v["title"],
            version=v["version"],
            code_system=v["codeSystem"],
            bound_elements=tuple(v["boundElements"]),
            key_prefix=v["keyPrefix"],
            codes=tuple(
                Code(c["code"], c["display"], c.get("definition", ""), c.get("parent", "")) for c in v["codes"]
            ),
        )
        for vid, v in data["valueSets"].items()
    }


def value_set_problem(value_set: str, code: str, key: str) -> str | None:
    """Why (value set, code) cannot label `key`, or None. Refused at import: a label for a code the value
    set does not have would never be shown, and the real code would stay raw."""
    sets = value_sets()
    vs = sets.get(value_set)
    if vs is None:
        return f"value set {value_set!r} is not one the cards show ({', '.join(sorted(sets))})"
    if vs.code(code) is None:
        return f"code {code!r} is not in {vs.id} (FHIR R4 {vs.elements}: {', '.join(c.code for c in vs.codes)})"
    if key != vs.key_for(code):
        return f"the label of {vs.id}#{code} must have the key {vs.key_for(code)}, not {key}"
    return None


def value_set_for_key(key: str) -> tuple[ValueSet, Code] | None:
    """The (value set, code) a status key labels, from its key alone."""
    for vs in value_sets().values():
        if key.startswith(vs.key_prefix + "."):
            code = vs.code(key[len(vs.key_prefix) + 1 :])
            if code is not None:
                return vs, code
    return None


@dataclass(frozen=True)
class CoverageCell:
    locale: str
    labelled: tuple[str, ...]
    missing: tuple[str, ...]  # codes a card in this locale would show raw
    fallback: tuple[str, ...]  # codes labelled only through a fallback locale (e.g. English for German)

    @property
    def complete(self) -> bool:
        return not self.missing and not self.fallback


@dataclass(frozen=True)
class CoverageRow:
    value_set: ValueSet
    cells: tuple[CoverageCell, ...]


def coverage(
    locales: Iterable[str],
    chains: Mapping[str, list[str]],
    labels: Mapping[str, set[str]],
) -> list[CoverageRow]:
    """Per value set and locale: which codes have a label of their own, which only through a fallback
    (a German doctor would read English), and which none at all (the card shows the raw code).

    `labels[locale]` are the keys that locale labels (the source: the keys that exist at all).
    """
    rows = []
    locales = list(locales)
    for vs in value_sets().values():
        cells = []
        for locale in locales:
            chain = chains[locale]
            own_chain = [c for c in chain if c != chain[-1]] or chain  # all but the source, unless source
            labelled, fallback, missing = [], [], []
            for code in vs.codes:
                key = vs.key_for(code.code)
                if any(key in labels.get(c, set()) for c in own_chain):
                    labelled.append(code.code)
                elif key in labels.get(chain[-1], set()):
                    fallback.append(code.code)
                else:
                    missing.append(code.code)
            cells.append(CoverageCell(locale, tuple(labelled), tuple(missing), tuple(fallback)))
        rows.append(CoverageRow(vs, tuple(cells)))
    return rows
