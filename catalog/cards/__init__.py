"""Card i18n strings: the localization seam of the card chrome (issue 7).

Layout: `domain` (pure rules: locales and plural forms, placeholders, the checks, bundles), `valuesets` and
`preview` (pure), `pofiles` (Babel .po read/write, pure), `services` (writes), `selectors` (reads), `views`,
`forms`, `api`, `urls`, `demo`. The models live in `catalog/models/cards.py`.
"""
