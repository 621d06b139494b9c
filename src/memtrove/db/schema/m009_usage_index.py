"""An index for the per-prompt questions about ``context_usage`` by hook: how many prompts
since the last pin, snooze or forget (the nudge), without scanning every row ever logged."""

NAME = "m009_usage_index"

STATEMENTS: tuple[str, ...] = ("CREATE INDEX context_usage_hook ON context_usage (hook_name, id)",)
