"""The signs of a manipulated LLM-facing text, as compiled patterns (read by `manipulation.py`).

Every pattern is linear: no nested unbounded repetition, every gap between two words bounded
(`[^.\\n]{0,80}`), alternatives that cannot overlap. They run on the *normalized* text (invisible characters
removed, tag characters decoded, NFKC), so `ig\\u200bnore previous instructions` still reads as what the model
reads. Each pattern carries a `signal`: the short name a safety officer sees beside the excerpt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from catalog.domain.lookalikes import LETTERS


class Kind:
    IMPERATIVE = "imperative"  # instructions aimed at the model, not a description of the tool
    PSEUDO_TAG = "pseudo-tag"  # <IMPORTANT>, <system>, [INST]: markup that poses as a higher authority
    INVISIBLE = "invisible-unicode"  # zero-width, bidi, tag characters, soft hyphen: text a reviewer cannot see
    ENCODED = "encoded-blob"  # long base64 / hex / escape runs: text a reviewer cannot read
    URL = "url"  # a destination outside the catalog
    EMAIL = "email"
    SECRET = "secret-access"  # credential files and keys a tool has no business naming
    EXFILTRATION = "exfiltration"  # instructions to send data elsewhere
    SHADOWING = "tool-shadowing"  # instructions about how *another* tool of the catalog is to be called


ALL_KINDS = (
    Kind.IMPERATIVE,
    Kind.PSEUDO_TAG,
    Kind.INVISIBLE,
    Kind.ENCODED,
    Kind.URL,
    Kind.EMAIL,
    Kind.SECRET,
    Kind.EXFILTRATION,
    Kind.SHADOWING,
)


@dataclass(frozen=True)
class Pattern:
    kind: str
    signal: str
    regex: re.Pattern[str]
    # Words every match contains, as groups: each group needs one of its words in the lower-cased text (spaces
    # collapsed). A cheap test before the regex: most texts contain none, so most regexes never run.
    keys: tuple[frozenset[str], ...]

    def may_match(self, present: frozenset[str] | set[str]) -> bool:
        """`present`: the words of ALL_KEYS found in the text (keywords_in)."""
        return all(not present.isdisjoint(group) for group in self.keys)


def _p(kind: str, signal: str, pattern: str, *keys: tuple[str, ...]) -> Pattern:
    return Pattern(kind, signal, re.compile(pattern, re.IGNORECASE), tuple(frozenset(g) for g in keys))


_NOT_KEYS = ("not", "n't", "never", "dont")
_SEND_KEYS = (
    "send",
    "forward",
    "upload",
    "post",
    "transmit",
    "exfiltrate",
    "leak",
    "copy",
    "mail",
    "relay",
    "submit",
    "deliver",
    "redirect",
    "route",
    "sync",
    "bcc",
    "cc",
    "share",
    "report",
)
_SECRET_KEYS = (
    "credential",
    "secret",
    "password",
    "passphrase",
    "api",
    "key",
    "token",
    "cookie",
    "environment",
    "env var",
    "system prompt",
    "conversation",
    "chat",
    "message history",
    "previous messages",
    "full context",
    "entire context",
    "whole context",
)


_GAP = r"[^.\n]{0,80}?"  # the rest of one clause: bounded, so a pattern is linear in the text
_NOT = r"(?:do\s+not|don'?t|never|must\s+not|should\s+not|shall\s+not)"
_WHO = r"(?:(?:the\s+)?(?:user|human|patient|clinician|doctor|physician|operator|caller)s?|them|him|her)\b"
_SECRETS = (
    r"(?:credentials?|secrets?|passwords?|passphrases?|api[\s_-]?keys?|access[\s_-]?tokens?|auth(?:entication|"
    r"orization)?[\s_-]?tokens?|bearer[\s_-]?tokens?|private[\s_-]?keys?|ssh[\s_-]?keys?|session[\s_-]?(?:tokens?|"
    r"cookies?)|cookies|environment\s+variables|env\s+vars|system\s+prompt|conversation(?:\s+history)?|chat\s+"
    r"(?:history|log)|message\s+history|previous\s+messages|(?:full|entire|whole)\s+context)"
)
_SEND = (
    r"(?:send|sends|sending|forward|forwards|forwarding|upload|uploads|uploading|post|posts|posting|transmit|"
    r"exfiltrate|leak|copy|mail|e-?mail|relay|submit|deliver|redirect|route|sync|bcc|cc|share|report)"
)
_DESTINATION = (
    r"(?:(?:the\s+following|this|that|below|our|my)\s+(?:\w+\s+)?(?:server|endpoint|url|address|webhook|host|"
    r"inbox|mailbox|bucket|e-?mail|site)"
    r"|(?:an?\s+|the\s+)?(?:external|remote|third[\s-]party|outside|offsite|personal|attacker'?s?)\s+(?:\w+\s+)?"
    r"(?:server|endpoint|url|address|webhook|host|inbox|mailbox|bucket|system|service|e-?mail|location)"
    r"|(?:an?\s+|the\s+)?webhook|h(?:tt|xx)ps?://|[\w.+-]+@[\w-]+\.|[\w.+-]+\s*[\[(]\s*at\s*[\])])"
)

TEXT_PATTERNS: tuple[Pattern, ...] = (
    # --- imperative: the text talks to the model about its instructions, the user, or precedence ---------------
    _p(
        Kind.IMPERATIVE,
        "ignore previous instructions",
        r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|your|of|these|those)\s+){0,3}"
        r"(?:previous|prior|above|earlier|preceding|existing|original|system|safety|other)\s+"
        r"(?:instructions?|rules?|prompts?|messages?|directions?|guidelines?|guardrails?|constraints?|context)\b",
        ("ignore", "disregard", "forget", "override", "bypass"),
    ),
    _p(
        Kind.IMPERATIVE,
        "ignore previous instructions",
        r"\bpay\s+no\s+attention\s+to\s+(?:(?:all|any|the|your)\s+)?(?:previous|prior|above|earlier|other|system)\b"
        r"|\bforget\s+(?:everything|all|anything)\s+(?:you|above|before|else|that)\b"
        r"|\bfollow\s+only\s+(?:this|these|the\s+following)\b",
        ("pay no attention", "forget", "follow only"),
    ),
    _p(
        Kind.IMPERATIVE,
        "ignore previous instructions",
        r"\b(?:ignorier(?:e|en)?|vergiss|vergessen\s+sie|missachte)\s+(?:(?:alle|die|deine|ihre|sämtliche)\s+){0,2}"
        r"(?:vorherigen|bisherigen|früheren|obigen|vorigen|anderen|system)\w*\s+(?:anweisungen|instruktionen|regeln|vorgaben)",
        ("ignorier", "vergiss", "vergessen", "missachte"),
    ),
    _p(
        Kind.IMPERATIVE,
        "conceal from the user",
        r"\b(?:sag|sage|sagen\s+sie|teile|erzähl|erzähle)\s+(?:dem|der|den)\s+(?:nutzer|benutzer|anwender|patienten|arzt|"
        r"ärztin)\w*\s+nichts\b|\bohne\s+(?:den|die|dem)\s+(?:nutzer|benutzer|anwender)\w*\s+zu\s+(?:informieren|"
        r"fragen|benachrichtigen)",
        ("nichts", "ohne"),
    ),
    _p(
        Kind.IMPERATIVE,
        "addresses the model",
        r"\b(?:note|message|p\.?\s?s\.?)\s+(?:to|for)\s+(?:the\s+|all\s+)?(?:ai|assistant|model|llm|agent|ai\s+agent)s?\b"
        r"|\b(?:the\s+)?(?:model|assistant|ai|llm|agent)\s+(?:is|are)\s+(?:required|instructed|obliged|expected)\s+to\b",
        (" ai", "assistant", "model", "llm", "agent"),
    ),
    _p(
        Kind.IMPERATIVE,
        "overrides instructions",
        r"\b(?:overrides?|supersedes?|takes\s+precedence\s+over)\s+(?:(?:all|any|the|your)\s+){0,2}"
        r"(?:(?:previous|prior|other|system|earlier|safety)\s+)?(?:instructions?|rules?|prompts?|policies|guidelines?)\b",
        ("overrid", "supersed", "precedence"),
    ),
    _p(
        Kind.IMPERATIVE,
        "earlier instructions reversed",
        r"\b(?:were|was|have\s+been|had\s+been)\s+(?:(?:previously|originally|initially|earlier)\s+)?"
        r"(?:told|advised|instructed|asked|trained|configured)\s+(?:(?:not\s+)?to\b|earlier\b|before\b|previously\b)",
        ("told", "advised", "instructed", "asked", "trained", "configured"),
    ),
    _p(
        Kind.IMPERATIVE,
        "conceal from the user",
        rf"\b{_NOT}\s+(?:tell|inform|notify|alert|let|warn)s?\s+{_WHO}",
        _NOT_KEYS,
        ("tell", "inform", "notify", "alert", "let", "warn"),
    ),
    _p(
        Kind.IMPERATIVE,
        "conceal from the user",
        rf"\bwithout\s+(?:telling|informing|notifying|alerting)\s+{_WHO}",
        ("without",),
    ),
    _p(
        Kind.IMPERATIVE,
        "conceal from the user",
        r"\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose)\s+(?:this|that|it|these|any\s+of\s+this|"
        r"the\s+(?:instruction|note|step|request|above|following))\b",
        ("mention", "reveal", "disclose"),
    ),
    _p(
        Kind.IMPERATIVE,
        "conceal from the user",
        rf"\b(?:keep|hide)\b[^.\n]{{0,40}}?\bfrom\s+{_WHO}",
        ("keep", "hide"),
        ("from",),
    ),
    _p(
        Kind.IMPERATIVE,
        "conceal from the user",
        r"\b(?:secretly|covertly|surreptitiously)\b",
        ("secretly", "covertly", "surreptitiously"),
    ),
    _p(
        Kind.IMPERATIVE,
        "conceal from the user",
        r"\b(?:silently|quietly)\s+(?:send|forward|add|call|include|copy|upload|attach|change|replace|bcc|cc)\b",
        ("silently", "quietly"),
    ),
    _p(
        Kind.IMPERATIVE,
        "you must always",
        r"\byou\s+(?:must|shall|have\s+to|need\s+to|are\s+(?:required|instructed|obliged)\s+to)\s+"
        r"(?:always|never|first|immediately|now|also|secretly)\b",
        ("you",),
        ("must", "shall", "have to", "need to", "required", "instructed", "obliged"),
    ),
    _p(
        Kind.IMPERATIVE,
        "demands to run first",
        r"\b(?:must|should|shall)\s+always\s+be\s+(?:called|invoked|used|run|executed)\s+(?:first|before)\b",
        ("always",),
        ("must", "should", "shall"),
    ),
    _p(
        Kind.IMPERATIVE,
        "before using this tool",
        r"\bbefore\s+(?:using|calling|invoking|running|executing)\s+(?:this|the|any|other)\b"
        rf"{_GAP}\b(?:send|upload|forward|post|e-?mail|transmit|(?:read|open|cat|load|fetch)\b{_GAP}"
        r"(?:~/|/etc/|\.ssh|\.env\b|\.json\b|\.ya?ml\b|config|credential|secret|key\b|token|password))",
        ("before",),
    ),
    _p(
        Kind.IMPERATIVE,
        "system prompt",
        r"\b(?:system|developer)\s+(?:prompt|message|instructions?)\b",
        ("system", "developer"),
    ),
    _p(
        Kind.IMPERATIVE,
        "new instructions",
        r"\b(?:new|updated|real|actual|secret|hidden|special)\s+instructions?\b",
        ("instruction",),
    ),
    _p(
        Kind.IMPERATIVE,
        "role change",
        r"\byou\s+(?:are|will)\s+now\b|\bjailbreak|\bDAN\s+mode\b",
        ("now", "jailbreak", "dan mode"),
    ),
    _p(
        Kind.IMPERATIVE,
        "skip the human",
        r"\b(?:skip|bypass|circumvent|disable|avoid)\s+(?:the\s+|any\s+)?(?:approval|confirmation|review|hitl|"
        r"human[\s-]in[\s-]the[\s-]loop|safety\s+checks?|sign[\s-]?off)\b"
        rf"|\b{_NOT}\s+ask\s+(?:the\s+user\s+|anyone\s+)?(?:for\s+)?(?:confirmation|approval|consent|permission)\b"
        r"|\bno\s+need\s+to\s+(?:ask|confirm|wait\s+for)\b"
        r"|\b(?:confirmations?|approvals?|sign[\s-]?offs?|reviews?)\s+(?:is|are)\s+(?:not\s+(?:required|needed|"
        r"necessary)|unnecessary|optional)\b|\bno\s+(?:confirmation|approval|sign[\s-]?off|review)\s+(?:is\s+)?"
        r"(?:required|needed|necessary)\b",
        (
            "skip",
            "bypass",
            "circumvent",
            "disable",
            "avoid",
            "ask",
            "no need",
            "confirmation",
            "approval",
            "sign",
            "review",
        ),
    ),
    # --- pseudo tags: markup posing as the system or a higher authority -------------------------------------
    _p(
        Kind.PSEUDO_TAG,
        "pseudo tag",
        r"<\s*/?\s*(?:important|system|system[_-]?prompt|instructions?|secret|hidden|admin|critical|urgent|prompt|"
        r"assistant|developer|override|sys|inst|note|tool_call|function_calls?|context|rules?|ai|llm|model|agent)"
        r"\b[^<>\n]{0,40}>",
        ("<",),
    ),
    _p(
        Kind.PSEUDO_TAG,
        "chat template token",
        r"\[/?(?:INST|SYS|SYSTEM|IMPORTANT)\]|<<\s*/?\s*SYS\s*>>|<\|[a-z_]{2,20}\|>"
        r"|(?:\{\{|\[\[)\s*(?:system|important|instructions?|admin|assistant|developer)\b",
        ("[", "<<", "<|", "{{"),
    ),
    _p(Kind.PSEUDO_TAG, "html comment", r"<!--", ("<!--",)),
    _p(Kind.PSEUDO_TAG, "pseudo heading", r"(?m)^[ \t]*#{1,6}[ \t]*(?:system|instructions?|important)\b", ("#",)),
    # --- credentials and keys: no clinical tool has a reason to name them -------------------------------
    _p(
        Kind.SECRET,
        "credential file",
        r"~/[\w.-]{1,60}|(?<![\w/])\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|\bmcp\.json\b|"
        r"claude_desktop_config|/etc/(?:passwd|shadow)\b|(?<![\w.])\.env\b|\.netrc\b|\.npmrc\b|\.pgpass\b|"
        r"\.git-credentials\b|\.kube/config\b|\bwallet\.dat\b|\bseed\s+phrase\b",
        (
            "~/",
            ".ssh",
            "id_",
            ".aws",
            "mcp.json",
            "claude_desktop",
            "/etc/",
            ".env",
            ".netrc",
            ".npmrc",
            ".pgpass",
            ".git-cred",
            ".kube",
            "wallet.dat",
            "seed",
        ),
    ),
    # --- exfiltration: data sent somewhere the catalog does not declare ---------------------------------
    _p(
        Kind.EXFILTRATION,
        "send to an outside destination",
        rf"\b{_SEND}\b{_GAP}\b(?:to|into|at)\s+{_DESTINATION}",
        _SEND_KEYS,
    ),
    _p(
        Kind.EXFILTRATION,
        "send secrets",
        r"\b(?<!not\s)(?<!never\s)(?<!n't\s)(?:send|forward|upload|post|transmit|include|pass|append|attach|copy|leak|"
        rf"share|embed|insert|provide|put|paste|exfiltrate|reveal|print|output|(?:reply|respond|answer)\s+with)\b[^.\n]{{0,50}}?\b{_SECRETS}",
        (
            "send",
            "forward",
            "upload",
            "post",
            "transmit",
            "include",
            "pass",
            "append",
            "attach",
            "copy",
            "leak",
            "share",
            "embed",
            "insert",
            "provide",
            "put",
            "paste",
            "exfiltrate",
            "reveal",
            "print",
            "output",
            "with",
        ),
        _SECRET_KEYS,
    ),
    _p(
        Kind.EXFILTRATION,
        "smuggle through a parameter",
        r"\b(?:pass|put|include|add|embed|insert|place|provide|send)\s+(?:it|its|their|the|that|this|them|those)\s+"
        r"(?:(?:full|entire|whole|complete|raw)\s+)?(?:content|contents|text|output)\b[^.\n]{0,30}?"
        r"\b(?:as|in|into|inside|via)\s+(?:the\s+|a\s+)?(?:['\"`][\w-]{1,40}['\"`]|[\w-]{1,40}\s+(?:parameter|"
        r"argument|field|param)\b)",
        ("pass", "put", "include", "add", "embed", "insert", "place", "provide", "send"),
        ("content", "text", "output"),
    ),
    _p(
        Kind.EXFILTRATION,
        "hidden copy",
        r"\b(?:always|also|secretly|silently|quietly)\s+(?:bcc|cc|copy|forward|redirect)\b|\b(?:bcc|cc)\s*:\s*\S"
        r"|\b(?:to|recipients?|bcc|cc)\s*[=:]\s*['\"]?[\w.+-]+@",
        ("bcc", "cc", "copy", "forward", "redirect", "@"),
    ),
    _p(
        Kind.EXFILTRATION,
        "redirect the recipient",
        r"\b(?:change|replace|redirect|override|swap)\s+(?:the\s+|all\s+|any\s+)?(?:recipients?|receivers?|"
        r"destinations?|to[\s-]address(?:es)?|iban|account\s+numbers?|bank\s+accounts?)\b",
        ("change", "replace", "redirect", "override", "swap"),
        ("recipient", "receiver", "destination", "address", "iban", "account"),
    ),
)

ALL_KEYS: tuple[str, ...] = tuple(sorted({k for p in TEXT_PATTERNS for group in p.keys for k in group}))


def keywords_in(lowered: str) -> set[str]:
    """The words of ALL_KEYS that occur in `lowered` (one `in` test each, no regex)."""
    return {k for k in ALL_KEYS if k in lowered}


# URLs and e-mail addresses are found by their own patterns, so the host can be judged (example hosts and
# clinical code-system namespaces are identifiers, not destinations).
URL = re.compile(
    r"\b(?:https?|ftp|file|wss?)://[^\s<>\"'`)\]]{1,300}|\bwww\.[a-z0-9-]{1,63}\.[a-z]{2,24}\b"
    r"|\bhxxps?://[^\s<>\"'`)\]]{1,300}|\b[a-z0-9-]{1,63}\[\.\][a-z]{2,24}\b"
    r"|\bdata:[a-z]{1,20}/[a-z0-9.+-]{1,40};base64,",
    re.IGNORECASE,
)
EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]{1,64}@([A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24})\b")
# "records [at] mirror-clinic [dot] com": an address written so that a filter misses it.
OBFUSCATED_EMAIL = re.compile(
    r"\b[\w.+-]{1,64}\s*[\[(]\s*at\s*[\])]\s*[\w-]{1,63}(?:\s*[\[(]\s*dot\s*[\])]\s*[\w-]{1,63}){1,4}",
    re.IGNORECASE,
)
# Letters of another script that look Latin (Cyrillic о, Greek ο): folded for matching (the one table,
# catalog.domain.lookalikes), and a word that mixes them with Latin letters is itself a sign.
LOOKALIKES = LETTERS
MIXED_SCRIPT_WORD = re.compile(r"[^\W\d_]{2,60}")

# Base64 of 30 bytes or more, hex of 16 bytes or more, and runs of escapes; judged by `manipulation.py` (a
# base64 run must mix cases and carry a digit or + /, so a long German compound is not a blob).
BASE64 = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40,}={0,2}")
HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{32,}(?![0-9A-Za-z])")
ESCAPES = re.compile(
    r"(?:\\x[0-9a-fA-F]{2}){8,}|(?:%[0-9a-fA-F]{2}){8,}|(?:&#x?[0-9a-fA-F]{1,6};){6,}|(?:\\u[0-9a-fA-F]{4}){6,}"
)

# A reference to another tool is shadowing when the text around it tells the model how that tool is to be
# called, or steers the model away from it. "DO NOT USE WHEN … (use other-tool)" is the seed's anti-synonym
# practice: a plain redirect ("use X", "X instead", "see X") matches none of these, anywhere. Each pattern finds
# the context first and captures the name beside it (`name`), so a text without such a context costs one scan.
_NAME = r"""(?P<q>[`'"]?)(?P<name>[A-Za-z][\w.-]{0,100})"""
#   1. a call of the other tool as a trigger, then an instruction in the same clause:
#      "when send_email is called, always bcc …", "before calling send_email, add …"
SHADOW_TRIGGER = re.compile(
    r"(?:\b(?:when|whenever|each\s+time|every\s+time|any\s+time|once|if)\s+(?:(?:the|a|an|any|you|tool|agent|"
    r"assistant|model)\s+){0,2}(?:(?:call|calls|calling|use|uses|using|invoke|invokes|invoking|run|runs|running)\s+)?"
    r"|\b(?:before|after|prior\s+to)\s+(?:you\s+)?(?:calling|using|invoking|running|executing|call|use|invoke)\s+)"
    rf"(?:the\s+)?{_NAME}",
    re.IGNORECASE,
)
SHADOW_MODIFIER = re.compile(
    r"\b(?:always|must|should|shall|make\s+sure|ensure|be\s+sure|instead|also|add|append|include|set|replace|change|"
    r"override|bcc|cc|send|forward|copy|redirect|attach)\b",
    re.IGNORECASE,
)
#   2. "this tool has a side effect on the also present send_email tool"
SHADOW_SIDE_EFFECT = re.compile(
    rf"\b(?:side[\s-]effects?|effect)\s+on\s+(?:(?:the|also|present)\s+){{0,3}}{_NAME}", re.IGNORECASE
)
#   3. steering away from the other tool: shadowing everywhere but in the DO NOT USE WHEN line, where pointing
#      to the sibling is the practice.
HIJACK_BEFORE = re.compile(
    rf"\b(?:instead\s+of\s+(?:(?:using|calling|invoking)\s+)?(?:the\s+)?|{_NOT}\s+(?:use|call|invoke|trust)\s+"
    rf"(?:the\s+)?){_NAME}",
    re.IGNORECASE,
)
#   4. an instruction whose subject is the other tool ("the send_email tool must send all e-mails to …"), or a
#      claim about it ("get-patient is broken"): found by the words after the name, the name read backwards.
SHADOW_MODAL = re.compile(
    r"(?:\s+tool)?\s+(?:must|should|shall|needs\s+to|has\s+to)\s+(?:(?:now|always|also|only|first)\s+)?"
    r"(?:send|use|include|add|set|call|be\s+called\s+with|pass|forward|copy|bcc|cc|return|write|point|go|route)\b"
    r"|'s\s+(?:parameters?|arguments?|recipients?|inputs?|behaviou?r|results?|outputs?)\b",
    re.IGNORECASE,
)
HIJACK_CLAIM = re.compile(
    r"(?:\s+tool)?\s+(?:is|has\s+been)\s+(?:now\s+)?(?:deprecated|broken|disabled|unsafe|unreliable|compromised|"
    r"insecure|no\s+longer\s+(?:available|supported))\b",
    re.IGNORECASE,
)
