"""Bundles: texts along the fallback chain, the document the frontend loads, frontend bundles read back."""

from __future__ import annotations

from catalog.cards.domain.bundles import bundle_document, parse_bundle, texts_along_chain


def test_texts_along_chain_take_the_first_locale_in_the_chain_that_has_the_key() -> None:
    texts = {"en": {"a": ["A"], "b": ["B"], "c": ["C"]}, "de": {"a": ["A-de"], "b": ["B-de"]}, "de-AT": {"a": ["A-at"]}}
    assert texts_along_chain(["de-AT", "de", "en"], ["a", "b", "c"], texts) == {
        "a": (["A-at"], "de-AT"),
        "b": (["B-de"], "de"),
        "c": (["C"], "en"),
    }


def test_a_bundle_gives_plural_strings_as_lists_padded_for_the_locale() -> None:
    chosen = {"x.count": (["{count} item", "{count} items"], "en"), "x.title": (["Title"], "en")}
    document = bundle_document("pl", ["pl", "en"], {"x.count": True, "x.title": False}, chosen)
    assert document["strings"] == {"x.count": ["{count} item", "{count} items", "{count} items"], "x.title": "Title"}
    assert document["plural"]["forms"] == 3 and document["fallbacks"] == ["en"]


def test_frontend_bundles_parse_flat_nested_and_our_own_format_with_json_paths() -> None:
    _, flat, problems = parse_bundle({"card.a.title": "A", "card.a.count": ["1", "2"]}, "f.json")
    assert flat == {"card.a.title": (["A"], '$["card.a.title"]'), "card.a.count": (["1", "2"], '$["card.a.count"]')}
    _, nested, _ = parse_bundle({"card": {"a": {"title": "A"}}}, "n.json")
    assert nested == {"card.a.title": (["A"], '$["card"]["a"]["title"]')}
    locale, ours, _ = parse_bundle({"format": "condor-cards/v1", "locale": "de", "strings": {"card.a.title": "A"}}, "o")
    assert locale == "de" and list(ours) == ["card.a.title"]
    _, _, problems = parse_bundle({"strings": {"card.a.title": 3, "card.b.title": []}}, "bad.json")
    assert problems == [
        'bad.json: $.strings["card.a.title"]: expected a string, a list of plural forms or an object',
        'bad.json: $.strings["card.b.title"]: expected a string, a list of plural forms or an object',
    ]
