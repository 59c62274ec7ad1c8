"""Small card-string catalogs written as gettext text by hand (independent of our own writer), and people."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from catalog.cards.services.imports import cards_import
from catalog.core.audit import Actor


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def entry(
    key: str,
    english: str,
    plural: str | None = None,
    *,
    module: str = "base",
    slot: str = "label",
    note: str = "",
    fhir: str | None = None,
    forms: list[str] | None = None,
    flags: tuple[str, ...] = (),
    comment: str = "",
    previous: str | None = None,
    msgid: str | None = None,
) -> str:
    """One gettext entry; `forms` are the msgstr(s) (a template has none)."""
    lines = []
    if comment:
        lines.append(f"# {comment}")
    if note:
        lines.append(f"#. {note}")
    lines.append(f"#. condor:slot={slot}")
    if fhir:
        lines.append(f"#. condor:fhir={fhir}")
    lines.append(f"#: card-i18n-{module}.ts")
    if flags:
        lines.append("#, " + ", ".join(flags))
    if previous is not None:
        lines.append(f"#| msgid {_q(previous)}")
    lines.append(f"msgctxt {_q(key)}")
    lines.append(f"msgid {_q(msgid if msgid is not None else english)}")
    if plural is not None:
        lines.append(f"msgid_plural {_q(plural)}")
        for i, text in enumerate(forms or ["", ""]):
            lines.append(f"msgstr[{i}] {_q(text)}")
    else:
        lines.append(f"msgstr {_q((forms or [''])[0])}")
    return "\n".join(lines) + "\n"


def catalog(*entries: str, language: str | None = None, plural_forms: str | None = None) -> bytes:
    header = ['msgid ""', 'msgstr ""', '"Content-Type: text/plain; charset=utf-8\\n"']
    if language:
        header.append(f'"Language: {language}\\n"')
    if plural_forms:
        header.append(f'"Plural-Forms: {plural_forms}\\n"')
    return ("\n".join(header) + "\n\n" + "\n".join(entries)).encode("utf-8")


TEMPLATE = [
    entry("card.medication.title", "Medications", module="base", slot="title", note="Title of the medication card."),
    entry("card.medication.count", "{count} active medication", "{count} active medications", slot="hint"),
    entry("card.medication.kv.status", "Status", note="Key/value label on the medication card."),
    entry("card.medication.warning.interaction", "Possible interaction with {drug}", slot="message"),
    entry(
        "status.medicationrequest.on-hold",
        "On Hold",
        module="status",
        slot="status",
        fhir="medicationrequest-status#on-hold",
    ),
    entry(
        "status.medicationrequest.active",
        "Active",
        module="status",
        slot="status",
        fhir="medicationrequest-status#active",
    ),
    entry("hitl.warning.highTier", "<strong>High-risk</strong> change: {tool}", module="hitl", slot="message"),
]
GERMAN = [
    entry("card.medication.title", "Medications", forms=["Medikation"], flags=("reviewed",)),
    entry(
        "card.medication.count",
        "{count} active medication",
        "{count} active medications",
        forms=["{count} aktives Medikament", "{count} aktive Medikamente"],
    ),
    entry("card.medication.kv.status", "Status", forms=["Status"], flags=("same-as-source",)),
    entry(
        "card.medication.warning.interaction", "Possible interaction with {drug}", forms=["Wechselwirkung mit {drug}"]
    ),
    entry("status.medicationrequest.on-hold", "On Hold", forms=["Pausiert"]),
    entry("status.medicationrequest.active", "Active", forms=["Aktiv"]),
    entry(
        "hitl.warning.highTier",
        "<strong>High-risk</strong> change: {tool}",
        forms=["<strong>Hochrisiko</strong>-Änderung: {tool}"],
    ),
]


@pytest.fixture
def load(db: Any) -> Callable[..., Any]:
    def run(*files: tuple[str, bytes], **kwargs: Any) -> Any:
        return cards_import(files=list(files), actor=Actor(label="test"), **kwargs)

    return run


@pytest.fixture
def small(load: Callable[..., Any]) -> None:
    """Seven strings across the four modules, all translated into German."""
    load(("cards.pot", catalog(*TEMPLATE)), ("de.po", catalog(*GERMAN, language="de")))


@pytest.fixture
def translator(make_user: Callable[..., Any]) -> Any:
    return make_user("tina", "translator")


@pytest.fixture
def reviewer(make_user: Callable[..., Any]) -> Any:
    return make_user("rolf", "translator", "translator-reviewer")
