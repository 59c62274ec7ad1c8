"""Card-string reads, each a fixed number of queries whatever the number of strings (the tests assert it):
per locale (`locales`: order, chains, completion, FHIR coverage), the matrix (`matrix`), the side panel
(`panel`), what leaves the console (`exports`: bundles and gettext catalogs) and the checks' inputs (`specs`)."""
