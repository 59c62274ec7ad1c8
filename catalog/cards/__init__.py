"""Card i18n strings: the localization seam of the card chrome (issue 7).

Pure (no Django): `domain` (locales and plural forms, placeholders, markup, the checks, the never-localize
guard), `bundles`, `valuesets` (the FHIR R4 status code lists), `preview`, `pofiles` (gettext through Babel).
Around them: `findings` (recomputing the checks), `services` (a person's writes), `imports`, `selectors`
(reads), `exports` (bundles and catalogs), `views`/`forms`/`urls` (the workspace), `api`, `demo`.
The models live in `catalog/models/cards.py`.
"""
