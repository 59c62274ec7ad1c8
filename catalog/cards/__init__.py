"""Card i18n strings: the localization seam of the card chrome (issue 7).

`domain/` is pure (no Django): vocabulary, keys and the never-localize guard, locales and plural forms,
placeholders and markup, the checks, the FHIR R4 value sets, bundles, gettext catalogs through Babel, an
import's files read and checked, the card preview. `services/` writes (a person's edits, imports, the
findings, the demo strings); `selectors/` reads (locales, the matrix, the side panel, exports, the checks'
inputs). The boundaries: `views`/`forms`/`display`/`urls` (the workspace) and `api` (the bundles).
The models live in `catalog/models/cards.py`.
"""
