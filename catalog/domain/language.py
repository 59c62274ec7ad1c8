"""Which language a retrieval keyword is written in: a small, transparent English/German heuristic.

The TUCAN catalog gives each tool one FLAT list of retrieval keywords that mixes English and German
("table view", "Medikament öffnen", "ICD-Kapitel", ...). The review rule wants at least one keyword of each
language per tool, and the console shows which keyword was taken as which language, so the classifier has to be
explainable to a reviewer: every point it awards comes from a named signal (see `explain_keyword_language`).

Why a hand-written heuristic rather than a language-identification library or model: keywords are two or three
words long, far too short for character n-gram models to be reliable, and the vocabulary is narrow (clinical UI
phrases), which a few dozen rules cover well. It needs no dependency, no network and no model files, is
deterministic, and runs at tens of thousands of keywords per second.

How it works: a keyword is cut into tokens (on whitespace, hyphens and slashes, so "ICD-Kapitel" is judged as
"ICD" + "Kapitel"); each token earns points for English and/or German from the signals below; the language with
more points wins. A tie, or no points at all, is "und" (undetermined): a keyword made only of acronyms or codes
("SOP", "QM", "ICD-10") says nothing about its language, and it is better to say so than to guess.

One deliberate consequence of the catalog's conventions: English keywords are written in lower case while German
capitalizes every noun, so "patient" is English and "Patient" is German -- in this catalog the case IS the
evidence for a word both languages spell alike ("Kalender" vs "calendar" differ, "Patient"/"patient" do not).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

ENGLISH = "en"
GERMAN = "de"
UNDETERMINED = "und"
LANGUAGES = (ENGLISH, GERMAN, UNDETERMINED)

# --- signal weights -----------------------------------------------------------------------------------------------
# Strong signals are near-proof on their own; weak ones only tip the balance when nothing strong is present.
UMLAUT = 3  # ä ö ü ß: English never uses them.
UMLAUT_IN_ACRONYM = 1  # "GOÄ factor" is an English keyword naming a German fee schedule: only a hint.
FUNCTION_WORD = 2  # "der", "für", "anzeigen" / "the", "of", "show": closed-class words are unambiguous.
ENGLISH_WORD_CAPITALIZED = 1  # "Details Bericht": a capitalized English-looking word is often a German loan.
POSSESSIVE = 2  # "doctor's letter": the apostrophe-s genitive is English (German has it only in names).
STRONG_ENDING = 2  # "-ung", "-keit", "-ieren" / "-tions", "-ness": suffixes the other language does not have.
WEAK_ENDING = 1  # "-ing", "-ly", "-ed": very English, but short enough to collide now and then.
SPELLING = 1  # letter patterns typical of one language ("tz", "kt" / "w" before a consonant, final "y").
CAPITALIZED = 1  # German capitalizes nouns; this catalog writes English keywords in lower case.
LOWER_CASE = 1  # A lower-case word with no German signal: a lower-case German noun would be unusual.

# --- closed word lists (matched case-insensitively against whole tokens) ------------------------------------------
# German function words plus the UI verbs and adjectives that recur in tool keywords. Words that are also common
# English words ("in", "an", "am", "was", "will", "also", "per", "so") are deliberately absent from BOTH lists:
# "check in" and "in der Akte", "make an appointment" and "Brief an Facharzt" must be decided by their neighbours.
GERMAN_WORDS = frozenset(
    """
    der die das den dem des ein eine einen einem einer eines kein keine keinen keiner nicht und oder aber sowie
    für mit von vom zu zum zur im ins auf aus bei beim nach über unter vor zurück bis seit ohne gegen durch um
    zwischen als wie wer wo wann warum welche welcher welches welchen wieviel viele ist sind hat haben wird
    wurde wurden darf kann soll muss ja nein mir mich mein meine meinen meiner meines dein sich es er sie wir
    uns ihr ihre bitte heute morgen gestern jetzt noch schon nur auch hier dort dann sonst wieder immer sofort
    bereits zusammen gemeinsam einander nebeneinander
    neu neue neuer neues neuen neuem offen offene offener offenes offenen letzte letzter letztes letzten
    alle allen aller eigene eigenen eigener frei freie freier freies freien aktuell aktuelle aktueller aktuellen
    nächste nächster nächsten zuletzt ähnlicher
    anlegen öffnen senden finden ausstellen buchen anzeigen erstellen löschen bearbeiten suchen prüfen ändern
    aktualisieren schließen absagen verschieben drucken hinzufügen entfernen zeigen zeig gehe geh erinnere lesen
    schreiben speichern laden starten stoppen beenden erfassen eintragen markieren abrechnen versenden verschicken
    exportieren importieren hochladen herunterladen planen anfordern stornieren freigeben signieren
    unterschreiben dokumentieren zuweisen einladen sperren entsperren aufnehmen vergleichen berechnen messen
    abzeichnen quittieren vereinbaren verlegen ansehen anpassen einstellen ausfüllen ausdrucken abfragen abrufen
    archivieren auswählen übernehmen weiterleiten melden nachschlagen
    übersicht liste
    """.split()
)

# English function words, UI verbs and the few UI nouns that are not German words too ("details" is, but German
# writes it capitalized, which ENGLISH_WORD_CAPITALIZED accounts for).
ENGLISH_WORDS = frozenset(
    """
    the a of for and with to on by at from into onto over about after before than then if or not no yes
    is are be been being do does did can could should would may might must shall has have had
    it its this that these those there here what who whom whose when which where how why many much any some
    i me my mine you your we us our they them their he him his she her
    up off out new old last next previous recent current all every each other own today tomorrow yesterday
    list show open add get create update delete remove search find go back view send book cancel check edit print
    set change invite close save load start stop end begin finish done mark read write sign assign review approve
    reject submit export import upload download schedule reschedule move call order record enter select choose
    apply fill compare calculate display hide reset refresh clear sort filter share copy merge link unlink enable
    disable activate deactivate confirm dismiss archive restore renew repeat refill prescribe look take make give
    see say tell ask need want help
    details overview settings preferences results items entries
    """.split()
)

# --- endings (matched on the lower-cased token, only when the stem left over is long enough to be a word) ---------
# German-only suffixes: nouns (-ung, -keit, -schaft, the catalog's -bericht/-liste/-akte compounds), adjectives
# (-lich, -isch), verbs and participles (-ieren, -iert, -igt, -itet) and -bar adjectives. Endings that English
# shares were left out or narrowed: bare "-en" is English too (open, seen, often, allergen), so only the German verb
# shapes of it are listed ("-chern", "-nden", "-agen", "-esen", ...); "-chen" would catch "kitchen", so it is
# "-uchen"/"-achen"; "-ig" would catch "config", so it is "-tig"/"-igt"; "-bar" would catch "sidebar", so it is
# "-enbar"/"-chbar"/"-erbar"/"-ndbar".
_GERMAN_ENDINGS = tuple(
    """
    ung ungen ungs keit keiten heit heiten schaft schaften tionen
    lich liche lichen licher liches isch ische ischen ischer isches
    bericht berichte liste listen akte eintrag eintrags auftrag verlauf summe nahme
    ieren ierung iert ierte ierten ierter
    chern euern ngern ndern eln uchen achen eichen nden agen egen eigen eiten eiben ieben eben esen ehen
    hmen hnen dnen rnen tzen ssen
    tig igt itet eit enbar chbar erbar ndbar
    """.split()
)
# English-only suffixes. "-tion" and "-ment" are not here: German shares them (Dokumentation, Medikament), but
# always capitalized, so they are listed separately and count only in a lower-case word.
_ENGLISH_STRONG_ENDINGS = ("tions", "ness", "ity", "ities", "ance", "ances", "ence", "ences", "ship", "ful", "ous")
_ENGLISH_WEAK_ENDINGS = ("ing", "ings", "ies", "ed", "ly", "ize", "ized", "izes", "izing", "ization", "ic", "ics")
_ENGLISH_LOWER_CASE_ENDINGS = ("tion", "ment", "ments")
_MIN_STEM = 3  # "sung" must not look like "-ung"; "bed" must not look like "-ed".

# Exceptions to the German endings and verb shapes: common English words that happen to end the same way.
_ENGLISH_LOOKALIKES = frozenset(
    """
    golden garden broaden widen linen collagen lessen happen swollen pollen fallen shorten
    abdomen antigen allergen oxygen specimen regimen between mitten beholden deceit conceit forfeit surfeit counterfeit
    """.split()
)


def _ending_pattern(endings: Iterable[str]) -> re.Pattern[str]:
    # Longest first so "ungen" is reported rather than "ung"; the stem before the ending must be _MIN_STEM letters.
    alternatives = "|".join(sorted({re.escape(e) for e in endings}, key=len, reverse=True))
    return re.compile(rf"^\w{{{_MIN_STEM},}}?({alternatives})$")


_GERMAN_ENDING = _ending_pattern(_GERMAN_ENDINGS)
_ENGLISH_STRONG_ENDING = _ending_pattern(_ENGLISH_STRONG_ENDINGS)
_ENGLISH_WEAK_ENDING = _ending_pattern(_ENGLISH_WEAK_ENDINGS)
_ENGLISH_LOWER_CASE_ENDING = _ending_pattern(_ENGLISH_LOWER_CASE_ENDINGS)

# German participles: "abgesetzte", "eingescannte", "hochgeladene", "angekommen" -- a separable prefix, then
# "ge", then a participle ending. No English word is built like that.
_GERMAN_PARTICIPLE = re.compile(
    r"^(?:ab|an|auf|aus|ein|hoch|nach|vor|zu|zurück|mit|weg|her|hin|fest|frei)?"
    r"ge\w{2,}(?:t|te|ten|ter|tes|en|ene|enen|ener|enes)$"
)
_PARTICIPLE_LOOKALIKES = frozenset("generate generated general generic gene genes gentle genetic get gets".split())

# Lower-case German verbs in the infinitive: a verb prefix and the "-en" ending ("abhaken", "vorlesen",
# "nachfragen", "verordnen", "bereinigen"). Bare "-en" is English too, but English words seldom combine it with these
# prefixes; the few that do are in _ENGLISH_LOOKALIKES ("between", "abdomen", "antigen").
_GERMAN_PREFIXED_VERB = re.compile(
    r"^(?:ab|an|auf|aus|ein|nach|vor|zu|zurück|mit|weg|her|hin|hervor|be|ver|er|ent|zer|über|unter)\w{2,}[^e]en$"
)

# --- spelling patterns ---------------------------------------------------------------------------------------------
# German: "k" where English writes "c" (Kodierung, aktuell, Dokument; but not "ck", nor "lookup"/"workup"),
# "tz", "zw", "rz", "zu", "zei", "zah", "zt" and a final "-iz" (Notiz, Arzt); "sch" is German unless it starts
# "schedule"/"school"/"scheme" or is the English "dis-ch" (discharge).
_GERMAN_SPELLING = re.compile(
    r"(?<!c)k(?:[aot]|u(?!p)|r)|tz|zw|rz|zu|zei|zah|zt|iz$|(?<!^)(?<!di)sch|^sch(?!edul|ool|em)"
)
# English: "w" not followed by a vowel (show, view, how, who; German "w" always precedes a vowel), and a final "y"
# or a vowel + "y" (history, key, day; German has "y" only in loanwords).
_ENGLISH_SPELLING = re.compile(r"w(?![aeiouyäöü])|y$|[aeou]y")
# "c" not followed by "h" or "k" (clinical, record, cancel; German spells these with k or z). Only in lower-case
# words: a capitalized word with such a "c" is an English loan inside a German compound ("Patientenressource",
# "Risikoscores", "Code-Hierarchie") and says nothing against German.
_ENGLISH_C = re.compile(r"c(?![hk])")

# German hyphenated compounds keep the noun capitalized after the hyphen ("ICD-Kapitel", "E-Rezept", "FHIR-Export");
# English hyphenates in lower case ("co-payment", "e-prescription", "no-show").
_GERMAN_HYPHEN_COMPOUND = re.compile(r"\w-[A-ZÄÖÜ][a-zäöüß]")
_UMLAUT = re.compile(r"[äöüßÄÖÜ]")
_TOKEN_SPLIT = re.compile(r"[\s\-‐‑–—/_,;:()\[\]\"]+")
_POSSESSIVE = re.compile(r"^(\w+)['’]s$")
_LETTERS = re.compile(r"^[^\W\d_]+$")


@dataclass(frozen=True)
class LanguageEvidence:
    """The verdict for one keyword and the points behind it, so the console can show WHY."""

    keyword: str
    language: str
    english: int
    german: int
    signals: tuple[str, ...]


def _token_kind(token: str) -> str:
    """'acronym', 'capitalized', 'lower' or 'other' (codes, camelCase identifiers, mixed digits)."""
    if not _LETTERS.match(token):
        return "other"  # HL7, ICD-10's "10", HbA1c, NEWS2: codes carry no language.
    if token.isupper():
        return "acronym"  # SOP, QM, FHIR, and single capitals such as the "E" of "E-Rezept".
    if token.islower():
        return "lower"
    if token[0].isupper() and token[1:].islower():
        return "capitalized"
    return "other"  # eGFR, MedicationStatement: identifiers, not words.


def _score_token(token: str, kind: str, lower_case_counts: bool) -> tuple[int, int, list[str]]:
    """English points, German points and the signals that produced them, for one token."""
    en = de = 0
    signals: list[str] = []
    word = token.lower()

    if _UMLAUT.search(token):
        points = UMLAUT_IN_ACRONYM if kind == "acronym" else UMLAUT
        de += points
        signals.append(f"de+{points} umlaut/ß in {token!r}")
    if kind in ("acronym", "other"):
        return en, de, signals

    if word in GERMAN_WORDS:
        de += FUNCTION_WORD
        signals.append(f"de+{FUNCTION_WORD} German word {token!r}")
    elif word in ENGLISH_WORDS:
        points = FUNCTION_WORD if kind == "lower" else ENGLISH_WORD_CAPITALIZED
        en += points
        signals.append(f"en+{points} English word {token!r}")

    if word not in _ENGLISH_LOOKALIKES:
        if match := _GERMAN_ENDING.match(word):
            de += STRONG_ENDING
            signals.append(f"de+{STRONG_ENDING} ending -{match.group(1)} in {token!r}")
        elif word not in _PARTICIPLE_LOOKALIKES and _GERMAN_PARTICIPLE.match(word):
            de += STRONG_ENDING
            signals.append(f"de+{STRONG_ENDING} participle {token!r}")
        elif kind == "lower" and _GERMAN_PREFIXED_VERB.match(word):
            de += STRONG_ENDING
            signals.append(f"de+{STRONG_ENDING} prefixed verb {token!r}")
    if match := _ENGLISH_STRONG_ENDING.match(word):
        en += STRONG_ENDING
        signals.append(f"en+{STRONG_ENDING} ending -{match.group(1)} in {token!r}")
    elif match := _ENGLISH_WEAK_ENDING.match(word):
        en += WEAK_ENDING
        signals.append(f"en+{WEAK_ENDING} ending -{match.group(1)} in {token!r}")
    elif kind == "lower" and (match := _ENGLISH_LOWER_CASE_ENDING.match(word)):
        en += WEAK_ENDING
        signals.append(f"en+{WEAK_ENDING} lower-case ending -{match.group(1)} in {token!r}")

    if _GERMAN_SPELLING.search(word):
        de += SPELLING
        signals.append(f"de+{SPELLING} German spelling in {token!r}")
    if _ENGLISH_SPELLING.search(word) or (kind == "lower" and _ENGLISH_C.search(word)):
        en += SPELLING
        signals.append(f"en+{SPELLING} English spelling in {token!r}")

    if kind == "capitalized":
        de += CAPITALIZED
        signals.append(f"de+{CAPITALIZED} capitalized {token!r}")
    elif lower_case_counts and de == 0:
        en += LOWER_CASE
        signals.append(f"en+{LOWER_CASE} lower-case {token!r}")
    return en, de, signals


def explain_keyword_language(keyword: str) -> LanguageEvidence:
    """Score `keyword` for English and German and return the verdict with every signal that contributed."""
    tokens: list[str] = []
    possessives: list[str] = []
    for raw in _TOKEN_SPLIT.split(keyword.strip()):
        raw = raw.strip(".!?'’\"")
        if not raw:
            continue
        if match := _POSSESSIVE.match(raw):
            possessives.append(raw)
            raw = match.group(1)
        tokens.append(raw)

    kinds = [_token_kind(token) for token in tokens]
    # The weak "lower case means English" signal only holds in a keyword with no capitalized word and no German
    # function word: next to a capitalized noun a lower-case word is a German verb or adjective ("freie Termine",
    # "Termin buchen"), and next to "noch" or "der" it is a German verb ("was fehlt noch").
    lower_case_counts = "capitalized" not in kinds and not any(token.lower() in GERMAN_WORDS for token in tokens)

    en = de = 0
    signals: list[str] = []
    for token in possessives:
        en += POSSESSIVE
        signals.append(f"en+{POSSESSIVE} possessive {token!r}")
    for match in _GERMAN_HYPHEN_COMPOUND.finditer(keyword):
        de += SPELLING
        signals.append(f"de+{SPELLING} capitalized after hyphen {match.group(0)!r}")
    for token, kind in zip(tokens, kinds, strict=True):
        token_en, token_de, token_signals = _score_token(token, kind, lower_case_counts)
        en += token_en
        de += token_de
        signals.extend(token_signals)

    if en > de:
        language = ENGLISH
    elif de > en:
        language = GERMAN
    else:
        language = UNDETERMINED  # No signal, or evidence both ways in equal measure: do not guess.
    return LanguageEvidence(keyword=keyword, language=language, english=en, german=de, signals=tuple(signals))


def detect_keyword_language(keyword: str) -> str:
    """'en', 'de' or 'und' (undetermined) for one retrieval keyword."""
    return explain_keyword_language(keyword).language


def classify_keywords(keywords: Iterable[str]) -> dict[str, list[str]]:
    """Keywords grouped by detected language, input order kept; all three keys are always present."""
    groups: dict[str, list[str]] = {language: [] for language in LANGUAGES}
    for keyword in keywords:
        groups[detect_keyword_language(keyword)].append(keyword)
    return groups
