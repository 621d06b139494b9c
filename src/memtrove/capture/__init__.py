"""Stop-hook capture: what a session leaves behind in the vault.

Written by the Stop hooks (``decision-extractor``, ``handoff-generator``) into the internal
collection ``_memtrove``, through :func:`memtrove.index.internal.write_internal`, so search,
surfacing and consolidation read them like any document. The shapes below are a contract
(the consolidation lane reads observation documents by them); change them only together.

Observation documents, one per observation::

    _memtrove/agent/observations/<YYYY-MM-DD>-<sid8>-<type>-<hash8>.md
    content_type: observation
    ---
    title: "<one line>"
    type: "observation"
    observation_type: "<decision|preference|milestone|problem|discovery|feature|bugfix|change|refactor>"
    session_id: "<the Claude Code session id>"
    authored_at: "<UTC ISO-8601>"
    facts:
      - "<short, self-contained fact>"
    source: "<observer|heuristic>"
    confidence: <0..1>
    ---
    # <title>

    <narrative>

    ## Facts            (when there are facts: one "- fact" a line)
    ## Triples          (when there are triples: "- subject | predicate | object")

``<sid8>`` is the first 8 characters of the session id when it is a UUID (Claude Code's),
else the first 8 hex digits of the id's SHA-256; ``<hash8>`` the first 8 hex
digits of SHA-256(type, NUL, the title lowercased with single spaces). Strings in the
frontmatter are JSON strings (valid YAML). Per session (``merge_recent``, 7 days) the
decisions are also gathered in ``agent/decisions/<YYYY-MM-DD>-<sid8>.md`` (content type
``decision``, one ``## <title>`` section each, frontmatter list ``decisions``) and what to
avoid in ``agent/antipatterns/<YYYY-MM-DD>-<sid8>.md`` (``antipattern``, list
``antipatterns``). The session's handoff is ``agent/handoffs/<YYYY-MM-DD>-<sid8>.md``
(content type ``handoff``; see :mod:`.handoff`).

Modules: :mod:`.turns` (a transcript's messages as turns), :mod:`.observations` (observer
prompt, XML reader, heuristic), :mod:`.store` (paths, merge policies, writing),
:mod:`.contradictions`, :mod:`.causal`, :mod:`.extractor` (the decision-extractor run),
:mod:`.handoff`. The feedback loop's bookkeeping is :mod:`memtrove.lifecycle.feedback`.
"""
