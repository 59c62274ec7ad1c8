"""Card strings, pure: plain functions over plain values, no Django imports (a test enforces it).

`vocabulary` (seam modules, states, checks, slots), `keys` (the key shape and the never-localize guard),
`locales` (codes, plural forms, fallback chains), `text` (placeholders, markup, rendering with sample data),
`checks` (a translation → findings, and whether it ships), `valuesets` (the FHIR R4 status codes),
`bundles` (the frontend's JSON), `pofiles` (gettext catalogs through Babel), `imports` (an import's files read
and checked before anything is written) and `preview` (the card a string appears on).
"""
