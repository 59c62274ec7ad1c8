"""Card-string writes by people: a translator's save, a reviewer's mark, adding a locale.

Each runs in one transaction with its audit event, recomputes the findings of what it touched, and bumps
the card-strings version (the bundles' cache key). Refusals say what was wrong and what to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from catalog.cards.domain.checks import is_empty
from catalog.cards.domain.keys import never_localize_reason
from catalog.cards.domain.locales import SOURCE_LOCALE, language_of, normalize_locale, plural_spec
from catalog.cards.domain.pofiles import one_line
from catalog.cards.domain.vocabulary import Module, Severity, State
from catalog.cards.services.findings import base_locales_ensure, cards_version_bump, findings_refresh
from catalog.core import roles
from catalog.core.audit import Actor, AuditAction, audit_record
from catalog.core.permissions import has_role
from catalog.models import CardFinding, CardLocale, CardString, CardTranslation


class CardsRefused(Exception):
    """A refused card-string action; `message` is for the person who tried it, in the console's language."""

    def __init__(self, message: str, *, forbidden: bool = False):
        super().__init__(message)
        self.message = message
        self.forbidden = forbidden


def may_translate(user: Any) -> bool:
    return has_role(user, roles.TRANSLATOR) or has_role(user, roles.TRANSLATOR_REVIEWER)


def may_review(user: Any) -> bool:
    return has_role(user, roles.TRANSLATOR_REVIEWER)


def _audit_state(t: CardTranslation | None) -> dict[str, Any] | None:
    """A translation as its audit event records it, before and after."""
    if t is None or t.pk is None:
        return None
    return {"forms": t.forms, "state": t.state, "same_as_source": t.same_as_source, "comment": t.comment}


def _string_and_locale(key: str, locale: str) -> tuple[CardString, CardLocale]:
    string = CardString.objects.filter(key=key).first()
    if string is None:
        raise CardsRefused(
            _("no card string %(key)s; keys come from the source modules (import the template)") % {"key": key}
        )
    reason = never_localize_reason(key)
    if reason:
        raise CardsRefused(_("%(key)s is never localized (%(reason)s)") % {"key": key, "reason": reason})
    loc = CardLocale.objects.select_related("fallback").filter(code=locale).first()
    if loc is None:
        raise CardsRefused(
            _("no locale %(code)s; add it with manage.py cards_locales --add %(code)s") % {"code": locale}
        )
    return string, loc


@transaction.atomic
def translation_save(
    *, user: Any, key: str, locale: str, forms: Sequence[str], same_as_source: bool = False, comment: str = ""
) -> CardTranslation | None:
    """A translator's text for one string in one locale. Saving unchanged text of a fuzzy translation
    confirms it is still right (it stops being fuzzy); any change clears an earlier review."""
    if not may_translate(user):
        raise CardsRefused(_("only a translator may change card strings"), forbidden=True)
    string, loc = _string_and_locale(key, locale)
    forms = _editor_forms(string, loc, forms)
    comment = one_line(comment)
    # Lock the string: two people saving its first text in a locale at once are serialised, and the second
    # updates the row the first created instead of colliding with it.
    CardString.objects.select_for_update().filter(pk=string.pk).first()
    t = CardTranslation.objects.filter(string=string, locale=loc).first()
    before = _audit_state(t)
    if t is None and is_empty(forms) and not comment:
        return None
    if (
        t is not None
        and t.state in (State.TRANSLATED, State.REVIEWED)
        and t.forms == forms
        and t.same_as_source == same_as_source
        and t.comment == comment
    ):
        return t  # nothing changed: keep the review
    if t is None:
        t = CardTranslation(string=string, locale=loc)
    _text_set(t, string, user, forms, same_as_source=same_as_source, comment=comment)
    t.save()
    findings_refresh([string], [loc])
    cards_version_bump()
    t.refresh_from_db(fields=["ships"])
    audit_record(
        actor=Actor.for_user(user),
        action=AuditAction.CARDS_TRANSLATION_SAVED,
        object_type="cards.translation",
        object_id=f"{key}@{loc.code}",
        before=before,
        after=_audit_state(t),
    )
    return t


def _editor_forms(string: CardString, loc: CardLocale, forms: Sequence[str]) -> list[str]:
    """The editor's texts, trimmed, once they are the locale's number of forms; English is not edited here."""
    if loc.code == SOURCE_LOCALE:
        module = Module(string.module).source_file
        raise CardsRefused(_("English is the source: change it in %(file)s and import the template") % {"file": module})
    expected = plural_spec(loc.code).count if string.plural else 1
    cleaned = [(f or "").replace("\r\n", "\n").strip() for f in forms]
    if len(cleaned) != expected:
        raise CardsRefused(
            _("%(key)s needs %(n)s form(s) in %(code)s, not %(got)s")
            % {"key": string.key, "n": expected, "code": loc.code, "got": len(cleaned)}
        )
    return cleaned


def _text_set(
    t: CardTranslation, string: CardString, user: Any, forms: list[str], *, same_as_source: bool, comment: str
) -> None:
    """A translator's new text: translated (or untranslated when empty), unreviewed, shipping once checked."""
    empty = is_empty(forms)
    t.forms = [] if empty else forms
    t.state = State.UNTRANSLATED if empty else State.TRANSLATED
    t.same_as_source = same_as_source and not empty
    t.comment = comment
    t.translated_from = [] if empty else string.source_forms
    t.ships = False
    t.updated_by = user
    t.updated_at = timezone.now()
    t.reviewed_by = None
    t.reviewed_at = None


@transaction.atomic
def translation_review(*, user: Any, key: str, locale: str) -> CardTranslation:
    """A reviewer confirms a translation: never their own, never a fuzzy one, never one with an error."""
    if not may_review(user):
        raise CardsRefused(_("only a translator-reviewer may mark translations reviewed"), forbidden=True)
    string, loc = _string_and_locale(key, locale)
    # Lock the string as a save does; lock only that row (PostgreSQL refuses FOR UPDATE on the nullable side
    # of the reviewer join). Two reviewers at once: the second sees the first's review.
    CardString.objects.select_for_update().filter(pk=string.pk).first()
    t = CardTranslation.objects.select_related("reviewed_by").filter(string=string, locale=loc).first()
    if t is None or t.state == State.UNTRANSLATED:
        raise CardsRefused(_("%(key)s has no %(code)s translation to review") % {"key": key, "code": loc.code})
    if t.state == State.REVIEWED:
        who = t.reviewed_by.get_username() if t.reviewed_by else _("an import")
        raise CardsRefused(
            _("%(key)s in %(code)s was already reviewed by %(who)s") % {"key": key, "code": loc.code, "who": who}
        )
    if t.state == State.FUZZY:
        raise CardsRefused(
            _("%(key)s in %(code)s is fuzzy: the English changed; a translator confirms or fixes it first")
            % {"key": key, "code": loc.code}
        )
    if t.updated_by_id is not None and t.updated_by_id == user.pk:
        raise CardsRefused(
            _("you translated %(key)s in %(code)s; another reviewer must review it") % {"key": key, "code": loc.code},
            forbidden=True,
        )
    errors = list(
        CardFinding.objects.filter(string=string, locale=loc, severity=Severity.ERROR).values_list(
            "check_name", flat=True
        )
    )
    if errors:
        raise CardsRefused(_("fix the failing check(s) first: %(checks)s") % {"checks": ", ".join(errors)})
    before = _audit_state(t)
    t.state = State.REVIEWED
    t.reviewed_by = user
    t.reviewed_at = timezone.now()
    t.save(update_fields=["state", "reviewed_by", "reviewed_at"])
    cards_version_bump()
    audit_record(
        actor=Actor.for_user(user),
        action=AuditAction.CARDS_TRANSLATION_REVIEWED,
        object_type="cards.translation",
        object_id=f"{key}@{loc.code}",
        before=before,
        after=_audit_state(t),
    )
    return t


@transaction.atomic
def locale_add(*, actor: Actor, code: str, fallback: str | None = None, required: bool = False) -> CardLocale:
    """Add a locale. A regional one (de-AT) falls back to its language (de) when that exists, else to English."""
    try:
        code = normalize_locale(code)
        fallback = normalize_locale(fallback) if fallback else None
    except ValueError as exc:
        raise CardsRefused(str(exc)) from exc
    known = base_locales_ensure()
    if code in known:
        raise CardsRefused(_("locale %(code)s exists already") % {"code": code})
    if fallback is None:
        fallback = language_of(code) if language_of(code) in known else SOURCE_LOCALE
    if fallback not in known:
        raise CardsRefused(_("fallback %(code)s: no such locale; add it first") % {"code": fallback})
    loc = CardLocale.objects.create(code=code, fallback=known[fallback], required=required)
    findings_refresh(None, [CardLocale.objects.select_related("fallback").get(pk=loc.pk)])
    cards_version_bump()
    audit_record(
        actor=actor,
        action=AuditAction.CARDS_LOCALE_ADDED,
        object_type="cards.locale",
        object_id=code,
        after={"code": code, "fallback": fallback, "required": required},
    )
    return loc
