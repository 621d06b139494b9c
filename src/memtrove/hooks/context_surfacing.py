"""``context-surfacing`` (UserPromptSubmit): inject what the vault knows about a prompt.

The pipeline (clawmem inventory section 4, steps 1-11):

1. ``turn_index`` = earlier context-surfacing rows of the session (before any gate).
2. Gates (see :mod:`~memtrove.hooks.gates`), then the 600 s SHA-256 prompt dedupe.
3. The profile (``MEMTROVE_PROFILE``) sets budget, depth, legs and thresholds.
4. Multi-turn lookback builds the retrieval query (see :mod:`~memtrove.hooks.lookback`).
5. Discovery legs (see :mod:`~memtrove.hooks.discovery`), deep escalation included.
6. Filters: ``_PRIVATE/``, ``experiments/`` and the internal ``_memtrove`` collection (but
   for the decisions, antipatterns and deductions the session capture writes there);
   collections configured with ``surface: false``; snoozed documents; noise (bodies under 10 characters, agent denials); documents that
   fail the prompt-injection filter anywhere in title, path or body.
7. Composite scoring on the raw prompt, the adaptive threshold, then memory-type
   diversification (the best procedural document is promoted to fourth place).
8. Tiered entries rendered into ``<vault-context>`` within the token budget.
9. ``context_usage`` (and, through it, ``recall_events`` for the injected documents) is
   logged after the answer is written.

Privacy split (concepts/architecture): every turn writes a ``context_usage`` row so that
``turn_index`` follows the transcript. Turns stopped by a pre-retrieval gate (dedupe and
heartbeat included) store ``query_text = NULL``; turns that reached retrieval store the
raw prompt, whether or not anything was injected, so a follow-up can look back at them.
Without a session id nothing is logged and there is no lookback.

A prompt asking where the work stands ("where were we?", "what did we do last time?",
"pick up where we left off") is answered first by the project's last handoff (another
session's, in ``<vault-session>``), then by what retrieval finds.

Between composite scoring and the threshold, the session's focus topic (``memtrove focus
set``, else ``MEMTROVE_SESSION_FOCUS``) steers the ranking: x1.4 for documents matching it,
x0.75 for the rest, nothing when none matches (see :mod:`~memtrove.hooks.focus`). A prompt
about the user lifts canonical memories x1.14 in composite scoring (see
``retrieval.scoring``). After the threshold, spreading activation lifts results that were
injected together with the top HOT results before (see :func:`spread_activation`). Every
``MEMTROVE_NUDGE_INTERVAL`` (15) prompts without a pin, snooze or forget, a
``<vault-nudge>`` follows the context.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TypeVar

from memtrove.errors import MemtroveError
from memtrove.hooks.admission import FILTERED_PATHS, SURFACED_INTERNAL, admit, is_noise
from memtrove.hooks.audit import Trail
from memtrove.hooks.discovery import Candidate, discover
from memtrove.hooks.events import HookEvent, HookResult
from memtrove.hooks.focus import apply_topic_boost, session_topic
from memtrove.hooks.gates import gate_prompt
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.lookback import LOOKBACK, LOOKBACK_SECONDS, lookback_queries
from memtrove.hooks.profiles import apply_adaptive_threshold, lead_cut
from memtrove.hooks.render import (
    Entry,
    Link,
    Rendered,
    asks_why,
    checked_copies,
    render_context,
    routing_hint,
)
from memtrove.hooks.settings import HookSettings
from memtrove.patterns import LazyPattern
from memtrove.results import Document
from memtrove.results.lifecycle import Considered
from memtrove.retrieval.fts import parse_query
from memtrove.retrieval.recency import RecencyPlan, recency_plan
from memtrove.retrieval.scoring import (
    DEFAULT_WEIGHTS,
    composite_score,
    has_profile_intent,
    time_reference,
)
from memtrove.retrieval.snippets import Highlighter
from memtrove.security.guard import sanitize
from memtrove.vault import Vault

__all__ = [
    "FILTERED_PATHS",
    "HOOK_NAME",
    "SURFACED_INTERNAL",
    "continuation",
    "diversify",
    "is_boilerplate",
    "is_noise",
    "relationship_lines",
    "run",
    "vault_fact_lines",
    "without_lone_boilerplate",
]

T = TypeVar("T")

HOOK_NAME = "context-surfacing"
EVENT_NAME = "UserPromptSubmit"
PROCEDURAL_SLOT = 3  # 0-based: the fourth place
# Exempt from the lead cut: a dialogue turn answers with the turns around it (the evidence
# of a question about a conversation spans several), and it is short.
CONVERSATION = "conversation"
MAX_RELATIONSHIPS = 10
HOT_SCORE = 0.8
HOT_RATIO = 0.85
MAX_RULES = 5
NUDGE = (
    "<vault-nudge>You haven't managed memory recently. If something surfaced here is "
    "stale or wrong, memory_snooze or memory_forget it; memory_pin what matters."
    "</vault-nudge>"
)
CONTINUITY = 0.1  # lift of what the session's previous turn injected first, times the best
CONTINUITY_DOCUMENTS = 2
SPREAD_STEP = 0.1  # spreading activation per co-activated HOT result
SPREAD_CAP = 0.2
MAX_VAULT_FACTS = 20

# A prompt asking where the work stands: the project's last handoff answers it first.
_CONTINUATION = LazyPattern(
    r"\bwhere (?:were|was|are) (?:we|i)\b|\b(?:left|leave) off\b|\bpick (?:it |this )?up\b"
    r"|\b(?:last|previous|earlier|prior) (?:session|time|conversation|chat)\b"
    r"|\bwhat (?:did|were) (?:we|i|you) (?:do|doing|work(?:ing)? on|decide|say)\b"
    r"[^?.!]{0,40}\b(?:last|yesterday|before|previously|earlier)\b"
    r"|\bcarry on\b|\bcontinue (?:from|where|with (?:the|what) (?:last|previous))\b",
    re.I,
)
_BOILERPLATE = LazyPattern(
    r"licen[cs]e|copying|notice|code[_-]of[_-]conduct|contributing|security|changelog"
    r"|authors|owners|codeowners",
    re.I,
)
_PROCEDURAL = LazyPattern(
    r"\b(?:runbook|how-?to|playbook|procedure|checklist|guide|setup|install(?:ation)?|steps"
    r"|workflow|recipe)\b",
    re.I,
)


def is_procedural(document: Document) -> bool:
    """How-to knowledge (runbooks, guides, setup steps), judged by path and title."""
    return _PROCEDURAL.search(f"{document.path} {document.title}") is not None


def is_boilerplate(document: Document) -> bool:
    """A hub (an index, a map of content) or a project's boilerplate file (a licence, a
    code of conduct, a contributing guide, a changelog): it points at answers, it is not
    one."""
    name = document.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return document.content_type == "hub" or _BOILERPLATE.fullmatch(name) is not None


def without_lone_boilerplate(
    ranked: list[tuple[Document, float]],
) -> list[tuple[Document, float]]:
    """Hubs and boilerplate after every other entry, and none at all when nothing else
    would be injected: such a page never stands alone."""
    kept = [item for item in ranked if not is_boilerplate(item[0])]
    if not kept:
        return []
    return kept + [item for item in ranked if is_boilerplate(item[0])]


def diversify(ranked: list[tuple[Document, float]]) -> list[tuple[Document, float]]:
    """Promote the best procedural document to fourth place when the top three have none."""
    if len(ranked) <= PROCEDURAL_SLOT + 1 or any(is_procedural(d) for d, _ in ranked[:3]):
        return ranked
    for index in range(PROCEDURAL_SLOT + 1, len(ranked)):
        if is_procedural(ranked[index][0]):
            promoted = ranked[index]
            rest = ranked[:index] + ranked[index + 1 :]
            return [*rest[:PROCEDURAL_SLOT], promoted, *rest[PROCEDURAL_SLOT:]]
    return ranked


def relationship_lines(vault: Vault, documents: list[Document]) -> list[Link]:
    """``- Source --[type]--> Target`` for graph edges between surfaced documents (at most
    ten, strongest first; the renderer keeps those whose two ends it shows). An edge whose
    title fails the injection filter is left out."""
    keys = {d.doc_id: f"{d.collection}/{d.path}" for d in documents}
    links: list[Link] = []
    for relation in vault.graph.relations_among(list(keys), limit=MAX_RELATIONSHIPS):
        source, target = sanitize(relation.source_title), sanitize(relation.target_title)
        if source and target:
            line = f"- {source} --[{relation.relation_type}]--> {target}"
            links.append(Link(keys[relation.source_id], keys[relation.target_id], line))
    return links


def vault_fact_lines(vault: Vault, prompt: str) -> list[str]:
    """``subject predicate object`` for current facts about entities named in the *raw*
    prompt (earlier turns would seed unrelated entities); the renderer keeps them within the
    profile's ``facts_tokens``. A fact that fails the injection filter is left out."""
    lines: list[str] = []
    for fact in vault.graph.facts_about(prompt, limit=MAX_VAULT_FACTS):
        line = sanitize(fact.line())
        if line:
            lines.append(line)
    return lines


def _rank(
    vault: Vault,
    candidates: dict[str, Candidate],
    prompt: str,
    now: datetime,
    refused: dict[str, str] | None = None,
) -> list[tuple[Document, float]]:
    """Admitted candidates by composite score (the raw prompt's plan for questions about
    time), best first; candidates already scored by a time-aware search keep that score.
    Why each other candidate was refused goes into ``refused``."""
    plan = recency_plan(prompt)
    try:
        unsurfaced = vault.unsurfaced_collections()
    except MemtroveError:  # a broken config.yaml costs the setting, never the answer
        unsurfaced = frozenset()
    admitted: list[tuple[Document, Candidate]] = []
    for key, candidate in candidates.items():
        document = admit(vault, key, now, unsurfaced)
        if isinstance(document, str):
            (refused if refused is not None else {})[key] = document
        else:
            admitted.append((document, candidate))
    fresh = [(d.doc_id, c.relevance) for d, c in admitted if not c.prescored]
    inputs = {item.key: item for item in vault.retrieval.scoring_inputs(fresh)} if fresh else {}
    weights = plan.weights if plan else DEFAULT_WEIGHTS
    now = time_reference(inputs.values(), weights, now)
    about_user = has_profile_intent(prompt)
    scored: list[tuple[Document, float]] = []
    for document, candidate in admitted:
        item = inputs.get(document.doc_id)
        if candidate.prescored or item is None:
            scored.append((document, candidate.relevance))
        else:
            scored.append(
                (document, composite_score(item, weights, now, profile_intent=about_user))
            )
    group = type_order(plan)
    scored.sort(key=lambda item: (group(item[0]), -item[1]))
    return scored


def type_order(plan: RecencyPlan | None) -> Callable[[Document], int]:
    """The rank of a document's type group under ``plan``: for a pure recency plan the
    lead types (handoffs for "where were we?") first, then the recency-first types, then
    the rest; one group for every other prompt (no plan)."""
    lead = frozenset(plan.lead_types) if plan else frozenset()
    first = frozenset(plan.first_types) if plan else frozenset()

    def group(document: Document) -> int:
        return 0 if document.content_type in lead else 1 if document.content_type in first else 2

    return group


def _within_groups(
    scored: list[tuple[Document, float]], group: Callable[[Document], int] | None
) -> list[tuple[Document, float]]:
    """``scored`` best first within each ``group`` (one group when None)."""
    order = group or (lambda _: 0)
    return sorted(scored, key=lambda item: (order(item[0]), -item[1]))


def continuity(
    ranked: list[tuple[Document, float]],
    previous: Sequence[int],
    group: Callable[[Document], int] | None = None,
) -> list[tuple[Document, float]]:
    """Lift the candidates the session's previous turn injected first (``previous``: doc
    ids) by CONTINUITY of the best score, re-sorted within each ``group``. A conversation
    stays on its subject for a few prompts ("and on Windows nodes?"), so between two close
    candidates the one already in use is the likelier answer; a lift this small cannot
    carry in a document the prompt does not match (it must be a candidate already)."""
    if not ranked or not previous:
        return ranked
    best = max(score for _, score in ranked)
    wanted = frozenset(previous)
    lifted = [
        (document, score + CONTINUITY * best if document.doc_id in wanted else score)
        for document, score in ranked
    ]
    return _within_groups(lifted, group)


def spread_activation(
    ranked: list[tuple[Document, float]],
    pairs: dict[tuple[int, int], int],
    group: Callable[[Document], int] | None = None,
) -> list[tuple[Document, float]]:
    """After the threshold: each of the top three HOT results (score > 0.8, or within 85 %
    of the best, as the renderer's tiers) that a result was injected together with before
    lifts it by a tenth of the best score, at most a fifth, capped at 1.0; re-sorted within
    each ``group`` (the recency plan's type order). The threshold has already run, so a
    weak result cannot be carried in by its neighbours; lifts are relative because scores
    follow relevance in proportion (see ``retrieval.scoring``)."""
    if not ranked:
        return ranked
    best = max(score for _, score in ranked)
    hot = [
        document.doc_id
        for document, score in ranked[:3]
        if score > HOT_SCORE or (best > 0 and score >= HOT_RATIO * best)
    ]
    if not hot or not pairs:
        return ranked
    boosted: list[tuple[Document, float]] = []
    for document, score in ranked:
        partners = sum(
            1
            for other in hot
            if other != document.doc_id
            and pairs.get((min(other, document.doc_id), max(other, document.doc_id)), 0) > 0
        )
        bonus = min(SPREAD_CAP, SPREAD_STEP * partners) * best
        boosted.append((document, min(1.0, score + bonus)))
    return _within_groups(boosted, group)


def _pairs(vault: Vault, ranked: list[tuple[Document, float]]) -> dict[tuple[int, int], int]:
    return vault.sessions.co_activation_pairs([document.doc_id for document, _ in ranked])


def run(
    event: HookEvent, settings: HookSettings, open_vault: Callable[[], Vault], log: HookLog
) -> HookResult:
    """Answer one UserPromptSubmit payload (see the module docstring), led by the
    extraction nudge when the session has tool calls waiting to be read for memories."""
    nudge = _quietly(lambda: extraction_nudge(settings, event.session_id, event.prompt), "", log)
    result = _surface_prompt(event, settings, open_vault, log, len(nudge) + 1 if nudge else 0)
    if nudge:
        result.context = "\n".join(part for part in (nudge, result.context) if part)
    return result


def extraction_nudge(settings: HookSettings, session: str, prompt: str = "") -> str:
    """The nudge for a session whose extraction queue is not empty (counted as shown);
    none while the session compacts (see :mod:`memtrove.memory.queue`)."""
    if not session:
        return ""
    folder = settings.queue_dir
    if not folder.is_dir():  # nothing was ever queued: skip the queue's imports
        return ""
    from memtrove.memory.queue import ExtractionQueue

    return ExtractionQueue(folder).nudge(session, prompt)


def _surface_prompt(
    event: HookEvent,
    settings: HookSettings,
    open_vault: Callable[[], Vault],
    log: HookLog,
    reserved_chars: int,
) -> HookResult:
    """Everything but the extraction nudge, which takes ``reserved_chars`` of the budget."""
    started = time.monotonic()
    session = event.session_id
    prompt, gate = gate_prompt(
        event.prompt,
        heartbeat_suppression=settings.heartbeat_suppression,
        heartbeat_patterns=settings.heartbeat_patterns,
    )
    if not settings.gates and prompt:
        gate = None
    if gate is not None and not session:
        return HookResult()
    vault = open_vault()
    turn = _quietly(lambda: vault.sessions.turn_index(session, HOOK_NAME), 0, log) if session else 0
    result = HookResult()

    def usage(
        query_text: str | None,
        injected: list[tuple[int, float]],
        tokens: int,
        considered: Sequence[Considered] = (),
    ) -> None:
        if session:
            result.after.append(
                lambda: vault.sessions.log_context_usage(
                    session,
                    HOOK_NAME,
                    injected=injected,
                    estimated_tokens=tokens,
                    turn_index=turn,
                    query_text=query_text,
                    considered=considered,
                )
            )

    window = settings.dedupe_window_seconds
    if gate is None and window > 0 and vault.sessions.hook_seen(HOOK_NAME, prompt, window, session):
        gate = "dedupe"
    if gate is not None:
        log.info(f"skipped by the {gate} gate")
        usage(None, [], 0)  # pre-retrieval: keep the turn, not the text
        return result
    recent: list[str] = []
    if session:
        recent = _quietly(
            lambda: vault.sessions.recent_queries(
                session, within_seconds=LOOKBACK_SECONDS, limit=LOOKBACK + 3
            ),
            [],
            log,
        )
    query, thread = lookback_queries(prompt, recent)
    previous: list[int] = []
    if session:
        previous = _quietly(
            lambda: vault.sessions.last_injected(
                session, within_seconds=LOOKBACK_SECONDS, limit=CONTINUITY_DOCUMENTS
            ),
            [],
            log,
        )
    rules = _quietly(lambda: rule_lines(vault, prompt, event.cwd), "", log)
    reserved_chars += len(rules) + 1 if rules else 0
    handoff = _quietly(lambda: continuation(vault, prompt, event), "", log)
    reserved_chars += len(handoff) + 1 if handoff else 0
    vault_nudge = ""
    if settings.nudge_interval and session:
        since = _quietly(lambda: vault.sessions.prompts_since_curation(HOOK_NAME), 0, log) + 1
        if since >= settings.nudge_interval and since % settings.nudge_interval == 0:
            vault_nudge = NUDGE
    reserved_chars += len(vault_nudge) + 1 if vault_nudge else 0
    budget = max(0, (settings.profile.token_budget * 4 - reserved_chars) // 4)
    topic = _quietly(
        lambda: session_topic(settings.focus_dir, session, settings.session_focus), None, log
    )
    try:
        rendered, ranked, trail = _surface(
            vault, query, thread, prompt, settings, started, log, budget, previous, topic
        )
    except Exception as error:
        # The turn still counts (and keeps its text): only this answer is lost.
        import traceback  # only on failure: it loads linecache and tokenize (~2 ms)

        log.error(f"retrieval failed: {type(error).__name__}: {error}", traceback.format_exc())
        usage(prompt, [], 0)
        return result
    ids = {f"{d.collection}/{d.path}": (d.doc_id, s) for d, s in ranked}
    shown = [entry.key for entry in rendered.shown]
    usage(prompt, [ids[key] for key in shown], rendered.tokens, trail.shown(shown))
    result.surfaced = [entry.key for entry in rendered.shown]
    result.copies = {entry.key: entry.also_at for entry in rendered.shown if entry.also_at}
    result.tokens = rendered.tokens
    parts = (handoff, rendered.text, rules, vault_nudge)
    result.context = "\n".join(part for part in parts if part)
    return result


def continuation(vault: Vault, prompt: str, event: HookEvent) -> str:
    """For a prompt asking where the work stands ("where were we?", "what did we do last
    time?"), the last handoff of the session's project (see
    :func:`memtrove.hooks.session_start.last_handoff`); otherwise ""."""
    if not _CONTINUATION.search(prompt[:500]):
        return ""
    from memtrove.hooks.session_start import last_handoff, project_of

    return last_handoff(vault, event.session_id, project_of(event))


def rule_lines(vault: Vault, prompt: str, cwd: str) -> str:
    """``<vault-rules>``: predictions and behaviors whose situations match the raw prompt
    (``cosine x weight x confidence >= 0.60``), from the project store and ``global``.
    Nothing is embedded when no rule has a situation."""
    if not vault.rules.has_rules():
        return ""
    from pathlib import Path

    from memtrove.memory.git import project_store_for
    from memtrove.memory.slugs import GLOBAL_STORE, store_name

    folder = Path(cwd) if cwd and Path(cwd).is_dir() else None
    stores = [store_name(project_store_for(folder))] if folder else []
    matches = vault.rules.match_rules(prompt, [*stores, GLOBAL_STORE])[:MAX_RULES]
    lines = [
        line
        for match in matches
        if (line := sanitize(f"- {match.rule.kind} ({match.score:.2f}): {match.rule.statement}"))
    ]
    return "<vault-rules>\n" + "\n".join(lines) + "\n</vault-rules>" if lines else ""


def _surface(
    vault: Vault,
    query: str,
    thread: str | None,
    prompt: str,
    settings: HookSettings,
    started: float,
    log: HookLog,
    budget_tokens: int,
    previous: Sequence[int] = (),
    topic: str | None = None,
) -> tuple[Rendered, list[tuple[Document, float]], Trail]:
    """Steps 5-8: discover with ``query`` (and the lookback ``thread``), filter, score
    (lifting what the previous turn injected first: ``previous``; steered by the session's
    focus ``topic``) and render with the raw ``prompt``; the :class:`Trail` says what each
    candidate became."""
    found = discover(vault, query, prompt, settings, started, thread=thread)
    trail, refused = Trail(found.candidates), dict[str, str]()
    for note in found.notes:
        log.info(note)
    profile = settings.profile
    plan = recency_plan(prompt)
    ranked = continuity(
        _rank(vault, found.candidates, prompt, datetime.now(UTC), refused),
        previous,
        type_order(plan),
    )
    ranked = apply_topic_boost(
        ranked,
        topic,
        lambda d: (d.title, f"{d.collection}/{d.path}", d.body),
        order=type_order(plan),
    )
    trail.admitted(ranked, refused)
    ranked = apply_adaptive_threshold(ranked, profile)
    trail.kept(ranked, "threshold")
    ranked = spread_activation(
        ranked, _quietly(lambda: _pairs(vault, ranked), {}, log), type_order(plan)
    )
    ranked = without_lone_boilerplate(diversify(ranked))[: profile.max_results]
    trail.kept(ranked, "depth")
    if plan is None:  # a recency plan puts its lead types first, whatever their scores
        # measured from the best note that may stand alone: a hub never sets the bar
        ranked = without_lone_boilerplate(
            lead_cut(
                ranked,
                profile,
                exempt=lambda d: d.content_type == CONVERSATION,
                leads=lambda d: not is_boilerplate(d),
            )
        )
        trail.kept(ranked, "lead cut")
    documents = [document for document, _ in ranked]
    rendered = render_context(
        [
            Entry(
                f"{d.collection}/{d.path}",
                sanitize(d.title) or "",
                d.content_type,
                s,
                d.body,
                checked_copies(found.also_at(f"{d.collection}/{d.path}")),
            )
            for d, s in ranked
        ],
        Highlighter(parse_query(prompt).highlight),
        budget_tokens,
        routing=routing_hint(prompt),
        why=asks_why(prompt),
        relationships=_quietly(lambda: relationship_lines(vault, documents), [], log)
        if len(documents) > 1
        else [],
        vault_facts=_quietly(lambda: vault_fact_lines(vault, prompt), [], log)
        if profile.facts_tokens
        else [],
        facts_tokens=profile.facts_tokens,
    )
    return rendered, ranked, trail


def _quietly(read: Callable[[], T], default: T, log: HookLog) -> T:
    """A best-effort read: a locked vault costs the feature, never the answer."""
    try:
        return read()
    except Exception as error:
        log.warning(f"{type(error).__name__}: {error}")
        return default
