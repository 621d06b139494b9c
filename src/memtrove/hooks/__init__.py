"""Claude Code hooks: ``memtrove hook NAME`` reads the hook's JSON on stdin and writes one
JSON object on stdout.

=====================  ================  ==================================================
hook                   Claude Code event what it does
=====================  ================  ==================================================
context-surfacing      UserPromptSubmit  injects ``<vault-context>`` relevant to the prompt
postcompact-inject     SessionStart      re-injects the state saved before a compaction
curator-nudge          SessionStart      shows the actions of ``memtrove curate``'s report
precompact-extract     PreCompact        saves the session's state before compaction
=====================  ================  ==================================================

Modules: :mod:`.events` (payload and answer), :mod:`.runner` (fail-open process),
:mod:`.settings` (environment), one module per hook, and the parts of context-surfacing
(:mod:`.gates`, :mod:`.profiles`, :mod:`.lookback`, :mod:`.discovery`, :mod:`.render`;
the injection guard is :mod:`memtrove.security.guard`). Nothing is imported here, so ``python -m memtrove.hooks`` loads
only what the hook it runs needs.
"""
