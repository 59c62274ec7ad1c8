"""A Babel extraction method for Django templates, so `pybabel extract` needs no GNU gettext.

Django's own `templatize` turns a template into Python source whose gettext calls carry the template's
{% translate %} / {% blocktranslate %} strings (what `makemessages` feeds to xgettext); Babel's Python
extractor then reads those calls.
"""

from __future__ import annotations

import io
from collections.abc import Collection, Iterator, Mapping
from typing import IO, Any

from babel.messages.extract import extract_python
from django.utils.translation.template import templatize


def extract_django(
    fileobj: IO[bytes], keywords: Mapping[str, Any], comment_tags: Collection[str], options: Mapping[str, Any]
) -> Iterator[tuple[int, str, Any, list[str]]]:
    encoding = options.get("encoding", "utf-8")
    # templatize keeps the template's layout for xgettext, which is lenient; Python's tokenizer is not,
    # so drop the indentation (line numbers stay, the gettext calls are unchanged).
    source = "\n".join(line.lstrip() for line in templatize(fileobj.read().decode(encoding)).splitlines())
    # Babel annotates extract_python with the (lineno, message, comments, context) shape of `extract()`'s results;
    # it yields what an extraction method does, (lineno, funcname, messages, comments), as annotated here.
    yield from extract_python(  # type: ignore[misc]
        io.BytesIO(source.encode(encoding)), keywords, comment_tags, {"encoding": encoding}
    )
