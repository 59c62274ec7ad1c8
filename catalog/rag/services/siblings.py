"""Sibling near-duplicate findings, refreshed once per system after a change's vectors are all current.

Each embedding batch that leaves its system with no pending vector schedules one refresh task (batches finishing
together may schedule two: the second finds nothing left); the refresh scores only the vectors the findings
do not account for yet (`ToolEmbedding.siblings_checked` false: new or re-made vectors, and the tools whose
siblings an import dropped) against the system's others, a C × N product, and replaces the findings that touch
them. A duplicate refresh finds nothing unchecked and writes nothing. The full N × N recompute stays for
`manage.py reembed` and for a change to most of a system (then it costs the same).
"""

from __future__ import annotations

import logging
from collections.abc import Collection

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from kombu.exceptions import OperationalError as KombuOperationalError

from catalog.domain import rules
from catalog.models import CatalogRevision, CatalogState, Finding, Tool, ToolEmbedding
from catalog.rag.domain.siblings import SiblingDelta, near_duplicate_pairs, sibling_delta
from catalog.rag.embedders import configured_model_id
from catalog.rag.selectors.siblings import RULE, SystemVectors, stored_sibling_pairs, system_vectors
from catalog.rag.selectors.vectors import vectors_pending
from catalog.services.finding_counts import finding_counts_refresh
from catalog.services.findings import finding_row, findings_store

log = logging.getLogger(__name__)

# By its registered name (catalog/rag/tasks.py), like EMBED_TOOLS_TASK: tasks call services, never the reverse.
REFRESH_SIBLINGS_TASK = "catalog.rag.tasks.refresh_siblings"
_CHUNK = 500  # declared ids per IN list


def sibling_findings_after_batch(systems: frozenset[str], *, model_id: str, after: int | None = None) -> list[str]:
    """After an embedding batch committed: schedule the sibling refresh of each of `systems` whose vectors are now
    all current; returns those. `after`: the batch's highest tool id (where the tools still waiting are).
    Of two batches finishing together both may schedule it; the later refresh
    finds nothing left to check. A batch that fails leaves its system pending until its retry (or the sweep)
    completes it, and that one schedules."""
    done = [system for system in sorted(systems) if not vectors_pending(system, model_id=model_id, after=after)]
    for system in done:
        sibling_refresh_schedule(system)
    return done


def sibling_refresh_schedule(system: str) -> None:
    # No countdown: a worker holds a message with an ETA unacknowledged until it runs, and kombu's Redis transport
    # crashes the worker when the broker drops while it holds one (restore_unacked on a closed connection). The
    # refresh is idempotent, so two batches finishing together cost one refresh and one no-op.
    try:
        current_app.tasks[REFRESH_SIBLINGS_TASK].apply_async((system,))
    except (KombuOperationalError, OSError) as exc:  # the broker is down: the sweep finds the unchecked vectors
        log.warning("could not queue the sibling refresh of %s (%s); the sweep will", system, exc)


def siblings_mark_stale(system: str, declared_ids: Collection[str]) -> int:
    """For an import, before it drops the stored sibling findings of `declared_ids` (their text changed, or they
    were retired): mark their vectors and those of their stored siblings unchecked, and schedule the refresh after
    commit. The siblings matter: one that named a changed tool among its nearest may now name another.
    Returns the number of vectors marked."""
    if not declared_ids:
        return 0
    names = set(declared_ids)
    names.update(x for pair in stored_sibling_pairs(system, touching=names) for x in pair)
    marked = 0
    ordered = sorted(names)
    for start in range(0, len(ordered), _CHUNK):
        marked += ToolEmbedding.objects.filter(
            tool__system=system, tool__declared_id__in=ordered[start : start + _CHUNK], siblings_checked=True
        ).update(siblings_checked=False)
    transaction.on_commit(lambda: sibling_refresh_schedule(system))
    return marked


def sibling_findings_update(system: str, *, model_id: str | None = None) -> int:
    """Bring the system's sibling findings up to its unchecked vectors (incrementally); returns how many vectors
    were checked (0: nothing to do). Under the import's per-system lock, so a refresh and an import never
    interleave their writes to the findings."""
    model_id = model_id or configured_model_id()
    with transaction.atomic():
        state = CatalogState.objects.select_for_update().filter(system=system).first()
        if state is None or state.current_revision is None:
            return 0
        vectors = system_vectors(system, model_id=model_id)
        changed = [i for i, checked in enumerate(vectors.checked) if not checked]
        if not changed:
            return 0
        if 2 * len(changed) >= len(vectors.tool_pks):  # most of the system: the full product costs the same
            sibling_findings_refresh(system, model_id=model_id)
            return len(changed)
        row = {name: i for i, name in enumerate(vectors.declared)}
        stored = [(row[a], row[b]) for a, b in stored_sibling_pairs(system) if a in row and b in row]
        delta = sibling_delta(vectors.matrix, changed, stored, settings.CONDOR_SIBLING_THRESHOLD)
        _findings_replace(system, state.current_revision, vectors, delta)
        ToolEmbedding.objects.filter(pk__in=[vectors.embedding_pks[i] for i in changed]).update(siblings_checked=True)
    log.info(
        "%s: sibling findings of %d changed tool(s) refreshed (%d rows scored)", system, len(changed), delta.rows_scored
    )
    return len(changed)


def _findings_replace(system: str, revision: CatalogRevision, vectors: SystemVectors, delta: SiblingDelta) -> None:
    """Replace the sibling findings touching `delta.affected` (on an affected tool, or naming one as the other)
    with those of `delta.pairs`, worded by the rule itself; recount the tools touched."""
    affected = sorted(delta.affected)
    touched: set[int] = set()
    old = Finding.objects.filter(system=system, rule=RULE)
    for start in range(0, len(affected), _CHUNK):
        chunk = affected[start : start + _CHUNK]
        rows = old.filter(
            Q(tool_id__in=[vectors.tool_pks[i] for i in chunk])
            | Q(details__other__in=[vectors.declared[i] for i in chunk])
        )
        touched.update(pk for pk in rows.values_list("tool_id", flat=True) if pk is not None)
        rows.delete()
    in_pairs = sorted(
        {vectors.tool_pks[i] for i, j, _ in delta.pairs} | {vectors.tool_pks[j] for _, j, _ in delta.pairs}
    )
    tools = {t.declared_id: t for t in Tool.objects.filter(pk__in=in_pairs)}
    view = rules.LintCatalog(
        system=system,
        tools=[rules.LintTool(t.descriptor(), None) for t in tools.values()],
        sibling_pairs=[(vectors.declared[i], vectors.declared[j], cosine) for i, j, cosine in delta.pairs],
    )
    found = rules.lint(view, only=[RULE])
    Finding.objects.bulk_create(
        [finding_row(system, tools[f.tool_id].pk if f.tool_id else None, f, revision) for f in found], batch_size=1000
    )
    finding_counts_refresh(touched | set(in_pairs))


def sibling_findings_refresh(system: str, *, model_id: str | None = None) -> int:
    """Recompute the system's sibling findings over every pair of its current vectors (N × N) and mark them all
    checked; returns the number of findings. Takes the import's per-system lock.

    The rule reads only the pairs and the tools in them, so only those tools are read (not the whole stored
    catalog: 50,000 tools' descriptors cost seconds); the findings are stored as a difference."""
    model_id = model_id or configured_model_id()
    with transaction.atomic():
        state = CatalogState.objects.select_for_update().filter(system=system).first()
        if state is None or state.current_revision is None:
            return 0
        # Marked before the vectors are read: one stored meanwhile is either read (and accounted for) or left
        # unchecked for the next refresh, never marked without being scored.
        ToolEmbedding.objects.filter(
            model_id=model_id,
            tool__system=system,
            siblings_checked=False,
            text_sha256=F("tool__rag_text_sha256"),
        ).update(siblings_checked=True)
        vectors = system_vectors(system, model_id=model_id)
        pairs = (
            near_duplicate_pairs(vectors.declared, vectors.matrix, settings.CONDOR_SIBLING_THRESHOLD)
            if len(vectors.tool_pks) > 1
            else []
        )
        pk_of = dict(zip(vectors.declared, vectors.tool_pks, strict=True))
        named = sorted({pk_of[a] for a, _, _ in pairs} | {pk_of[b] for _, b, _ in pairs})
        tools = [t for at in range(0, len(named), _CHUNK) for t in Tool.objects.filter(pk__in=named[at : at + _CHUNK])]
        view = rules.LintCatalog(
            system=system, tools=[rules.LintTool(t.descriptor(), None) for t in tools], sibling_pairs=pairs
        )
        pks = {t.declared_id: t.pk for t in tools}
        return findings_store(view=view, revision=state.current_revision, tool_pks=pks, only=[RULE])
