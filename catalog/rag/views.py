"""Tool-RAG pages: the resolution playground ("why not tool X?") and retrieval quality per revision."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from catalog.core.access import PAGE_ACCESS, may, page
from catalog.core.http import HtmxHttpRequest
from catalog.domain.keys import canonical_key
from catalog.models import CatalogProfile
from catalog.rag.domain.cases import CasesError
from catalog.rag.domain.resolution import why_not_message
from catalog.rag.embedders import EmbedderError
from catalog.rag.selectors.evaluations import quality_overview
from catalog.rag.selectors.resolution import SnapshotRefused, snapshot_resolve
from catalog.rag.selectors.vectors import embedding_status
from catalog.rag.services.evaluation import retrieval_evaluate
from catalog.web.forms import choice_field


class PlaygroundForm(forms.Form):
    prompt = forms.CharField(label=gettext_lazy("Prompt"), max_length=4000, widget=forms.Textarea(attrs={"rows": 3}))
    profile = forms.ChoiceField(label=gettext_lazy("Profile"))
    attachments = forms.BooleanField(label=gettext_lazy("Turn carries attachments"), required=False)
    multi_entity_intake = forms.BooleanField(label=gettext_lazy("Multi-entity intake"), required=False)
    top_k = forms.IntegerField(label=gettext_lazy("Top k"), min_value=1, max_value=50, required=False)
    byte_budget = forms.IntegerField(label=gettext_lazy("Byte budget"), min_value=0, required=False)
    why_not = forms.CharField(label=gettext_lazy("Why not tool …?"), max_length=200, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        slugs = list(CatalogProfile.objects.order_by("slug").values_list("slug", flat=True))
        choice_field(self, "profile").choices = [(s, s) for s in slugs]
        # The profile this deployment runs under, else the clinical one: what the runtime would resolve with.
        for preferred in (settings.CONDOR_ACTIVE_PROFILE, "clinical-production"):
            if preferred in slugs:
                self.fields["profile"].initial = preferred
                break
        self.fields["top_k"].widget.attrs["placeholder"] = str(settings.CONDOR_RAG_TOP_K)


@page("rag:playground")
def playground_page(request: HtmxHttpRequest) -> HttpResponse:
    form = PlaygroundForm(request.GET or None)
    snapshot = error = explanation = explained_hit = None
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        try:
            snapshot = snapshot_resolve(
                prompt=data["prompt"],
                profile=data["profile"],
                attachments=data["attachments"],
                multi_entity_intake=data["multi_entity_intake"],
                top_k=data["top_k"],
                byte_budget=data["byte_budget"],
            )
        except (SnapshotRefused, EmbedderError) as exc:
            error = str(exc)
        if snapshot is not None and data["why_not"]:
            # In the reader's language; the API's whyNot stays English (rag.api).
            explanation = why_not_message(snapshot, data["why_not"]).render(_)
            if snapshot.ranks is not None:
                explained_hit = snapshot.ranks.get(canonical_key(data["why_not"]))
    context = {
        "form": form,
        "snapshot": snapshot,
        "error": error,
        "explanation": explanation,
        "explained_hit": explained_hit,
        "explained_hits": [explained_hit] if explained_hit else [],
        "status": embedding_status(),
        "min_score": settings.CONDOR_RAG_MIN_SCORE,
    }
    template = "rag/playground.html#result" if request.htmx else "rag/playground.html"
    return render(request, template, context)


@page("rag:quality")
def quality_page(request: HttpRequest) -> HttpResponse:
    overview = quality_overview(limit=20)
    can_run = may(request.user, PAGE_ACCESS["rag:quality-run"][1])
    return render(request, "rag/quality.html", {"overview": overview, "latest": overview.latest, "can_run": can_run})


@require_POST
@page("rag:quality-run")
def quality_run_view(request: HttpRequest) -> HttpResponse:
    try:
        run = retrieval_evaluate(run_by=f"user:{request.user.get_username()}")
    except (CasesError, SnapshotRefused, EmbedderError) as exc:
        messages.error(request, _("The evaluation could not run: %(error)s") % {"error": exc})
    else:
        messages.success(
            request,
            _("Evaluated %(cases)d cases: recall@5 %(recall).3f, MRR %(mrr).3f.")
            % {"cases": run.cases, "recall": run.recall_at_5, "mrr": run.mrr},
        )
    return redirect("rag:quality")
