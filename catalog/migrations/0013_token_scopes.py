"""The `catalog` scope splits into `catalog:read` (lists, policy, owners, findings, revisions) and
`catalog:write` (importing a manifest, which replaces the whole catalog).

Each existing `catalog` token keeps what it has used: every one gets `catalog:read`; only a token that has
imported a revision (its name is on one, `imported_via = "api token NAME"`) also gets `catalog:write`. A read or
export token therefore loses nothing it did, and can no longer replace the catalog.
"""

from django.db import migrations


def split(apps, schema_editor):
    ApiToken = apps.get_model("catalog", "ApiToken")
    CatalogRevision = apps.get_model("catalog", "CatalogRevision")
    importers = set(
        CatalogRevision.objects.filter(imported_via__startswith="api token ").values_list("imported_via", flat=True)
    )
    for token in ApiToken.objects.all():
        if "catalog" not in token.scopes:
            continue
        scopes = [s for s in token.scopes if s != "catalog"]
        wanted = {"catalog:read"}
        if f"api token {token.name}" in importers:
            wanted.add("catalog:write")
        token.scopes = [*sorted(wanted), *scopes]
        token.save(update_fields=["scopes"])


def join(apps, schema_editor):
    ApiToken = apps.get_model("catalog", "ApiToken")
    for token in ApiToken.objects.all():
        if not {"catalog:read", "catalog:write"} & set(token.scopes):
            continue
        token.scopes = ["catalog", *[s for s in token.scopes if s not in ("catalog:read", "catalog:write")]]
        token.save(update_fields=["scopes"])


class Migration(migrations.Migration):
    dependencies = [("catalog", "0012_tier_floors")]

    operations = [migrations.RunPython(split, join)]
