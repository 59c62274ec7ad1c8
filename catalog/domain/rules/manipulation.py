"""llm-text-manipulation: hidden or imperative instructions in the texts a model reads about a tool.

A tool's description, ragDescription, ragKeywords, fragments, output instructions and the descriptions inside
its input schema all reach the model's context. They are the channel of the tool-poisoning, "rug pull" and
shadowing attacks described for MCP servers (Invariant Labs, mcp-scan): an `<IMPORTANT>` block asking the model
to read ~/.ssh/id_rsa and pass it as a parameter, zero-width text a reviewer cannot see, "when send_email is
called, always bcc …". Each finding names the field, the kind of sign and the text matched, so a safety officer
can remove it or, for a legitimate text, waive the finding with a justification.

Pure and linear: regexes compiled once (`manipulation_patterns.py`), bounded gaps, one pass per pattern over
one tool's joined texts.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from catalog.domain.budget import rag_heading
from catalog.domain.descriptor import Descriptor
from catalog.domain.keys import llm_name
from catalog.domain.messages import N_, Message
from catalog.domain.rules.base import Finding, LintCatalog, Severity, _each, _finding, rule
from catalog.domain.rules.manipulation_patterns import (
    BASE64,
    EMAIL,
    ESCAPES,
    HEX,
    HIJACK_BEFORE,
    HIJACK_CLAIM,
    LOOKALIKES,
    MIXED_SCRIPT_WORD,
    OBFUSCATED_EMAIL,
    SHADOW_MODAL,
    SHADOW_MODIFIER,
    SHADOW_SIDE_EFFECT,
    SHADOW_TRIGGER,
    TEXT_PATTERNS,
    URL,
    Kind,
    keywords_in,
)
from catalog.domain.rules.mcp_reading import foreign_text_names

RULE_ID = "llm-text-manipulation"
SCHEMA_MAX_DEPTH = 12  # input schemas nest a few levels; deeper nodes are not read (documented bound)
SCHEMA_MAX_TEXTS = 500  # description strings read per input schema
EXCERPT_CHARS = 100  # of matched text shown per hit
MAX_HITS = 20  # hits kept in one finding's details (the message counts them all)

# Joins a tool's texts into one string for one pass per pattern: no pattern crosses it (`\s`, `\b` and the
# bounded `[^.\n]` gaps all stop at the NUL), and no manifest text can contain it (the loader refuses NUL).
_SEPARATOR = "\n\x00\n"

# Characters a reviewer cannot see (or that reorder what they see): zero-width and joiners, bidi embeddings,
# overrides and isolates, the tag block (U+E0000), variation selectors, soft hyphen, fillers, C0/C1 controls.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef"
    "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)
_TAG_ASCII = re.compile("[\U000e0020-\U000e007e]")
_EMOJI_JOINERS = frozenset("\u200d\ufe0e\ufe0f")

# Hosts that are identifiers, not destinations: the reserved example and loopback names (RFC 2606, RFC 6761)
# and the clinical code-system namespaces a FHIR schema names (`system: http://loinc.org`).
_EXAMPLE_HOSTS = ("example.com", "example.org", "example.net", "localhost", "127.0.0.1")
_EXAMPLE_SUFFIXES = (".example", ".test", ".invalid", ".localhost")
_CODE_SYSTEM_HOSTS = ("hl7.org", "loinc.org", "snomed.info", "unitsofmeasure.org", "fhir.de", "dicom.nema.org")


@dataclass(frozen=True)
class Hit:
    field: str  # the manifest field, e.g. `description`, `inputSchema.properties.path.description`
    kind: str  # one of manipulation_patterns.ALL_KINDS
    signal: str  # what exactly was recognised
    excerpt: str  # the text matched, bounded

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "kind": self.kind, "signal": self.signal, "excerpt": self.excerpt}


def llm_texts(d: Descriptor) -> Iterator[tuple[str, str]]:
    """(manifest field, text) of every LLM-facing text of a tool."""
    for name, text in (
        ("description", d.description),
        ("ragDescription", d.rag_description),
        ("instructionFragment", d.instruction_fragment),
        ("stylingFragment", d.styling_fragment),
        ("outputInstructions", d.output_instructions),
    ):
        if text:
            yield name, text
    for lang in sorted(d.rag_keywords or {}):
        for i, keyword in enumerate(d.rag_keywords[lang]):
            if isinstance(keyword, str) and keyword:
                yield f"ragKeywords.{lang}[{i}]", keyword
    if isinstance(d.input_schema, dict):
        texts: list[tuple[str, str]] = []
        _schema_texts(d.input_schema, "inputSchema", 0, texts)
        yield from texts


def _schema_texts(node: Any, path: str, depth: int, out: list[tuple[str, str]]) -> None:
    if depth > SCHEMA_MAX_DEPTH or len(out) >= SCHEMA_MAX_TEXTS:
        return
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                if value:
                    out.append((f"{path}.description", value))
            elif isinstance(value, dict | list):
                _schema_texts(value, f"{path}.{key}", depth + 1, out)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            if isinstance(value, dict | list):
                _schema_texts(value, f"{path}[{i}]", depth + 1, out)


def normalized(text: str) -> str:
    """What the model reads: tag characters decoded to the ASCII they hide, other invisible characters removed,
    compatibility forms folded (NFKC turns fullwidth `ｉｇｎｏｒｅ` into `ignore`), Cyrillic and Greek letters that
    look Latin read as Latin (`ignоre` with a Cyrillic о)."""
    if text.isascii():
        return text
    text = _TAG_ASCII.sub(lambda m: chr(ord(m.group()) - 0xE0000), text)
    return unicodedata.normalize("NFKC", _INVISIBLE.sub("", text)).translate(LOOKALIKES)


def invisible_hit(field: str, text: str) -> Hit | None:
    """A hit listing the invisible characters of `text` (emoji joiners between symbols excepted)."""
    found: list[str] = []
    hidden = "".join(chr(ord(c) - 0xE0000) for c in _TAG_ASCII.findall(text))
    for m in _INVISIBLE.finditer(text):
        c, i = m.group(), m.start()
        if c in _EMOJI_JOINERS and i > 0 and unicodedata.category(text[i - 1]) in ("So", "Sk", "Mn", "Cf"):
            continue  # 🧑‍⚕️: a joiner or presentation selector inside an emoji sequence is what emoji are made of
        if 0xE0000 <= ord(c) <= 0xE007F:
            continue  # counted as hidden text below
        found.append(f"U+{ord(c):04X}")
    mixed = [] if text.isascii() else [w for w in MIXED_SCRIPT_WORD.findall(text) if _mixes_scripts(w)]
    if not found and not hidden and not mixed:
        return None
    parts = []
    if mixed:
        parts.append(f"Latin mixed with lookalike Cyrillic/Greek letters in {', '.join(repr(w) for w in mixed[:3])}")
    if found:
        unique = sorted(set(found))
        parts.append(f"{len(found)} invisible character(s) {', '.join(unique[:6])}{' …' if len(unique) > 6 else ''}")
    if hidden:
        parts.append(f"tag characters hiding {_bounded(hidden)!r}")
    return Hit(field, Kind.INVISIBLE, "invisible characters", "; ".join(parts))


def _has_lookalikes(texts: list[tuple[str, str]]) -> bool:
    return any(not t.isascii() and any(0x370 <= ord(c) <= 0x52F for c in t) for _, t in texts)


def _mixes_scripts(word: str) -> bool:
    return any("a" <= c.lower() <= "z" for c in word) and any(0x370 <= ord(c) <= 0x52F for c in word)


def _bounded(text: str, limit: int = EXCERPT_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _excerpt(text: str, start: int, end: int) -> str:
    lo, hi = max(0, start - 25), min(len(text), end + 25)
    piece = text[lo:hi].replace("\x00", " ")
    return ("…" if lo else "") + _bounded(piece) + ("…" if hi < len(text) else "")


def _host(url: str) -> str:
    rest = url.split("://", 1)[1] if "://" in url else url
    host = re.split(r"[/?#]", rest, maxsplit=1)[0].rsplit("@", 1)[-1]
    return host.split(":", 1)[0].lower().rstrip(".")


def _identifier_host(host: str) -> bool:
    bare = host.removeprefix("www.")
    return (
        bare in _EXAMPLE_HOSTS
        or bare.endswith(_EXAMPLE_SUFFIXES)
        or any(bare == h or bare.endswith("." + h) for h in (*_EXAMPLE_HOSTS[:3], *_CODE_SYSTEM_HOSTS))
    )


def _blob(run: str) -> str | None:
    """Why `run` (a base64-alphabet run) is an encoded blob, or None when it is a long ordinary word."""
    if not (any(c.isupper() for c in run) and any(c.islower() for c in run)):
        return None
    if not any(c.isdigit() or c in "+/" for c in run):
        return None
    try:
        decoded = base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return "base64-like run"
    printable = sum(c.isprintable() for c in decoded) / max(1, len(decoded))
    return f"base64, decodes to {_bounded(decoded, 60)!r}" if printable > 0.9 else "base64 run"


def _hex(run: str) -> str | None:
    """Why `run` (32+ hex digits) is an encoded blob, or None for a digest: text hidden in hex decodes to
    printable ASCII, and a commit SHA (40) or SHA-256 (64) that does not is an identifier a schema may name."""
    if not (any(c.isdigit() for c in run) and any(c.isalpha() for c in run)):
        return None
    data = bytes.fromhex(run[: len(run) // 2 * 2])
    if sum(32 <= b < 127 for b in data) / len(data) > 0.9:
        return f"hex, decodes to {_bounded(data.decode('ascii', errors='replace'), 60)!r}"
    return None if len(run) in (40, 64) else "hex run"


class _Joined:
    """One tool's texts, normalized and joined, with the field of every offset."""

    def __init__(self, texts: Iterable[tuple[str, str]]) -> None:
        self.fields: list[str] = []
        self.starts: list[int] = []
        parts: list[str] = []
        at = 0
        for field, text in texts:
            norm = normalized(text)
            self.fields.append(field)
            self.starts.append(at)
            parts.append(norm)
            at += len(norm) + len(_SEPARATOR)
        self.text = _SEPARATOR.join(parts)

    def field_at(self, offset: int) -> str:
        return self.fields[bisect.bisect_right(self.starts, offset) - 1]

    def line_at(self, offset: int) -> str:
        lo = self.text.rfind("\n", 0, offset) + 1
        hi = self.text.find("\n", offset)
        return self.text[lo : hi if hi >= 0 else len(self.text)]


def catalog_names(tools: Iterable[Descriptor]) -> dict[str, str]:
    """Every name the model may see for a tool of the catalog (declared id, LLM name, aliases), lower-cased,
    mapped to its declared id."""
    names: dict[str, str] = {}
    for d in tools:
        for name in (d.declared_id, llm_name(d.declared_id), *(d.aliases or [])):
            names.setdefault(name.lower(), d.declared_id)
    return names


def manipulation_hits(d: Descriptor, names: Mapping[str, str]) -> list[Hit]:
    """Every sign of manipulation in the LLM-facing texts of `d`; `names` from catalog_names (for shadowing)."""
    raw = list(llm_texts(d))
    # One scan of all texts for the rare invisible character before looking field by field.
    hits = (
        [h for field, text in raw if (h := invisible_hit(field, text)) is not None]
        if _INVISIBLE.search("\n".join(t for _, t in raw)) or _has_lookalikes(raw)
        else []
    )
    joined = _Joined(raw)
    text = joined.text
    lowered = " " + " ".join(text.lower().split())
    present = keywords_in(lowered)

    def add(start: int, end: int, kind: str, signal: str) -> None:
        hits.append(Hit(joined.field_at(start), kind, signal, _excerpt(text, start, end)))

    for p in TEXT_PATTERNS:
        if p.may_match(present):
            for m in p.regex.finditer(text):
                add(m.start(), m.end(), p.kind, p.signal)
    if "://" in lowered or "www." in lowered or "data:" in lowered or "[.]" in lowered:
        for m in URL.finditer(text):
            if not _identifier_host(_host(m.group())):
                add(m.start(), m.end(), Kind.URL, "url")
    if "@" in lowered:
        for m in EMAIL.finditer(text):
            if not _identifier_host(m.group(1).lower()):
                add(m.start(), m.end(), Kind.EMAIL, "e-mail address")
    if "dot" in lowered and ("[" in lowered or "(" in lowered):
        for m in OBFUSCATED_EMAIL.finditer(text):
            add(m.start(), m.end(), Kind.EMAIL, "obfuscated e-mail address")
    if max(map(len, lowered.split(" "))) >= 32:  # a blob is one long run without spaces
        for m in BASE64.finditer(text):
            why = _blob(m.group())
            if why:
                add(m.start(), m.end(), Kind.ENCODED, why)
        for m in HEX.finditer(text):
            why = _hex(m.group())
            if why:
                add(m.start(), m.end(), Kind.ENCODED, why)
    if "\\x" in lowered or "%" in lowered or "&#" in lowered or "\\u" in lowered:
        for m in ESCAPES.finditer(text):
            add(m.start(), m.end(), Kind.ENCODED, "escape sequence run")
    if _mentions_another_tool(lowered, d.declared_id, names):
        hits.extend(_shadowing(d, joined, names))
    return _unique(hits)


_IDENTIFIER_LIKE = re.compile(r"[_.-]|[a-z][A-Z]")
_CLIENT_PREFIXES = ("mcp_", "mcp-", "functions.")


# Punctuation around a name in prose ("(use get-patient)", "`search`", "send-letter's"), read as spaces.
_AROUND_NAMES = str.maketrans({c: " " for c in "()[]{}<>,;:!?\"'`*"})


def _mentions_another_tool(lowered: str, self_id: str, names: Mapping[str, str]) -> bool:
    """Whether any word of the text is another tool's name, or carries a client prefix: the shadowing patterns
    only run then. A superset of what `_tool_named` accepts, found with one split."""
    if "mcp" in lowered or "functions." in lowered:
        return True
    words = {w.rstrip(".-") for w in lowered.translate(_AROUND_NAMES).split()}
    return any(names[w] != self_id for w in words & names.keys())


def _tool_named(token: str, quoted: bool, names: Mapping[str, str]) -> str | None:
    """The declared id `token` names in the catalog, if any: identifier-like names anywhere (also behind a
    client's `mcp_…_` or `functions.` prefix), one-word names ("search") only when quoted, as ordinary words
    are not tool names."""
    token = token.rstrip(".-")
    if not _IDENTIFIER_LIKE.search(token):
        return names.get(token.lower()) if quoted else None
    target = names.get(token.lower())
    if target is None and token.lower().startswith(_CLIENT_PREFIXES):
        lowered = token.lower()
        for i, c in enumerate(lowered):
            rest = lowered[i + 1 :]
            if c in "_-." and rest in names and _IDENTIFIER_LIKE.search(rest):
                return names[rest]
    return target


def _shadowing(d: Descriptor, joined: _Joined, names: Mapping[str, str]) -> Iterator[Hit]:
    text, self_id = joined.text, d.declared_id

    def hit(start: int, end: int, signal: str) -> Hit:
        return Hit(joined.field_at(start), Kind.SHADOWING, signal, _excerpt(text, start, end))

    def in_do_not_use(offset: int) -> bool:
        heading = rag_heading(joined.line_at(offset))
        return heading is not None and heading[0] == "DO NOT USE WHEN"

    for m in SHADOW_TRIGGER.finditer(text):
        target = _tool_named(m.group("name"), bool(m.group("q")), names)
        clause = re.split(r"[.\n]", text[m.end() : m.end() + 120], maxsplit=1)[0]
        if target not in (None, self_id) and SHADOW_MODIFIER.search(clause):
            yield hit(m.start(), m.end() + len(clause), f"instructs how {target} is called")
    for m in SHADOW_SIDE_EFFECT.finditer(text):
        target = _tool_named(m.group("name"), bool(m.group("q")), names)
        if target not in (None, self_id):
            yield hit(m.start(), m.end(), f"claims a side effect on {target}")
    for m in HIJACK_BEFORE.finditer(text):
        target = _tool_named(m.group("name"), bool(m.group("q")), names)
        if target not in (None, self_id) and not in_do_not_use(m.start()):
            yield hit(m.start(), m.end(), f"steers the model away from {target}")
    claims = ((SHADOW_MODAL, "instructs", True), (HIJACK_CLAIM, "steers the model away from", False))
    for pattern, signal, anywhere in claims:
        for m in pattern.finditer(text):
            words = text[max(0, m.start() - 101) : m.start()].split()
            if not words or text[m.start() - 1 : m.start()].isspace():
                continue  # the name must end right where the instruction starts
            raw = words[-1]
            token = raw.strip("`'\"")
            target = _tool_named(token, raw != token, names)
            if target not in (None, self_id) and (anywhere or not in_do_not_use(m.start())):
                yield hit(m.start() - len(raw), m.end(), f"{signal} {target}")


def _unique(hits: list[Hit]) -> list[Hit]:
    """One hit per (field, kind, signal): an `<IMPORTANT>` block's opening and closing tag are one sign."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for h in hits:
        key = (h.field, h.kind, h.signal)
        if key not in seen:
            seen.add(key)
            out.append(h)
    return out


@rule(RULE_ID, Severity.ERROR, N_("Manipulation in LLM-facing text"), local=True)
def _llm_text_manipulation(catalog: LintCatalog) -> Iterator[Finding]:
    names = catalog_names(t.descriptor for t in catalog.tools)
    for name, label in foreign_text_names(catalog).items():
        names.setdefault(name, label)  # an MCP tool may also shadow another catalog's tool
    for d, _ in _each(catalog):
        hits = manipulation_hits(d, names)
        if not hits:
            continue
        shown = "; ".join(f"{h.field}: {h.kind} ({h.signal}) {h.excerpt!r}" for h in hits[:3])
        more: Message | str = Message(N_("; and %(n)s more"), {"n": len(hits) - 3}) if len(hits) > 3 else ""
        yield _finding(
            RULE_ID,
            d,
            Message(
                N_(
                    "%(count)s sign(s) of manipulation in text the model reads: %(shown)s%(more)s. The model takes "
                    "these texts as instructions: remove it, or, if the text is legitimate, a safety officer waives "
                    "this finding with a justification."
                ),
                {"count": len(hits), "shown": shown, "more": more},
            ),
            hits=[h.as_dict() for h in hits[:MAX_HITS]],
            kinds=sorted({h.kind for h in hits}),
            total=len(hits),
        )
