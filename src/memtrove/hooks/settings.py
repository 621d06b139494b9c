"""What a hook process reads from its environment, read once by the runner.

Environment (all optional):
    MEMTROVE_VAULT, MEMTROVE_CONFIG_DIR       the vault and its config (as for the CLI)
    MEMTROVE_PROFILE                          speed | balanced (default) | deep
    MEMTROVE_HOOK_DEDUP_WINDOW_SEC            prompt dedupe window, seconds (600; 0 = off)
    MEMTROVE_HEARTBEAT_PATTERNS               extra heartbeat phrases, comma-separated
    MEMTROVE_DISABLE_HEARTBEAT_SUPPRESSION    true = never skip heartbeat-looking prompts
    MEMTROVE_HOOK_VECTORS                     auto (default) | on | off: the vector leg in
                                              a hook process (see context_surfacing)
    MEMTROVE_NUDGE_INTERVAL                   prompts without a pin, snooze or forget before
                                              context-surfacing adds <vault-nudge> (15; 0 = off)
    MEMTROVE_HOOK_TIMEOUT                     seconds before a hook gives up (default: a
                                              margin under Claude Code's timeout)
    MEMTROVE_FOCUS_ROOT                       the session focus files' folder (default
                                              ``$XDG_CACHE_HOME/memtrove/sessions``)
    MEMTROVE_SESSION_FOCUS                    focus topic of sessions without a focus file
    MEMTROVE_PRETOOL_INJECT                   true = pretool-inject answers (default: off,
                                              it injects nothing)
    MEMTROVE_CONTRADICTION_INVALIDATE         true = decision-extractor also invalidates a
                                              decision a newer one contradicts (default:
                                              only lowers its confidence, logs "would
                                              invalidate")
    XDG_CACHE_HOME                            hooks.log and curator-report.json live in
                                              ``$XDG_CACHE_HOME/memtrove``
    CLAUDE_CONFIG_DIR                         Claude Code's folder (default ``~/.claude``),
                                              where the compaction hooks find project memory
"""

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from memtrove.config import Settings, cache_dir
from memtrove.hooks.profiles import PROFILES, Profile, resolve_profile
from memtrove.paths import QUEUE_FOLDER

__all__ = ["HOOK_BUSY_TIMEOUT_MS", "VECTOR_MODES", "HookSettings", "cache_dir"]

HOOK_BUSY_TIMEOUT_MS = 1500  # DESIGN.md: hooks wait at most 1.5 s for a lock per statement
VECTOR_MODES = ("auto", "on", "off")
_TRUE = {"1", "true", "yes", "on"}


class HookSettings(NamedTuple):
    """Settings of one hook process; ``warnings`` are logged, never fatal, and left out of
    comparisons (settings that differ only in their warnings are equal)."""

    vault_path: Path | str  # a file, or a server's URL (see memtrove.locations)
    config_dir: Path
    cache_dir: Path
    claude_dir: Path = Path("~/.claude")
    profile: Profile = PROFILES["balanced"]
    dedupe_window_seconds: int = 600
    heartbeat_suppression: bool = True
    heartbeat_patterns: tuple[str, ...] = ()
    vectors: str = "auto"
    timeout_seconds: float | None = None
    nudge_interval: int = 15
    gates: bool = True  # False only for evaluations: every prompt goes on to retrieval
    contradiction_invalidate: bool = False
    pretool_inject: bool = False  # MEMTROVE_PRETOOL_INJECT
    focus_root: Path | None = None  # MEMTROVE_FOCUS_ROOT; None: <cache>/sessions
    session_focus: str = ""  # MEMTROVE_SESSION_FOCUS: the topic of sessions without a file
    warnings: tuple[str, ...] = ()  # the last field: see _compared

    def _compared(self) -> tuple[object, ...]:
        return tuple(self)[:-1]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HookSettings):
            return NotImplemented
        return self._compared() == other._compared()

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, HookSettings):
            return NotImplemented
        return self._compared() != other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    @property
    def focus_dir(self) -> Path:
        """Where session focus files live (see :mod:`memtrove.hooks.focus`)."""
        return self.focus_root or self.cache_dir / "sessions"

    @property
    def queue_dir(self) -> Path:
        """The extraction queues (``<cache>/queue``)."""
        return self.cache_dir / QUEUE_FOLDER

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        vault: str | Path | None = None,
        config_dir: str | Path | None = None,
    ) -> "HookSettings":
        env = os.environ if env is None else env
        warnings: list[str] = []
        paths = Settings.from_env(env, vault=vault, config_dir=config_dir)
        profile, warning = resolve_profile(env.get("MEMTROVE_PROFILE"))
        if warning:
            warnings.append(warning)
        window = _number(env, "MEMTROVE_HOOK_DEDUP_WINDOW_SEC", 600.0, warnings)
        vectors = env.get("MEMTROVE_HOOK_VECTORS", "").strip().lower() or "auto"
        if vectors not in VECTOR_MODES:
            warnings.append(f"MEMTROVE_HOOK_VECTORS must be auto, on or off, not {vectors!r}")
            vectors = "auto"
        timeout = _number(env, "MEMTROVE_HOOK_TIMEOUT", 0.0, warnings)
        nudge = _number(env, "MEMTROVE_NUDGE_INTERVAL", 15.0, warnings)
        extra = env.get("MEMTROVE_HEARTBEAT_PATTERNS", "")
        return cls(
            vault_path=paths.vault_path,
            config_dir=paths.config_dir,
            cache_dir=cache_dir(env),
            claude_dir=_claude_dir(env),
            profile=profile,
            dedupe_window_seconds=max(0, int(window)),
            heartbeat_suppression=env.get("MEMTROVE_DISABLE_HEARTBEAT_SUPPRESSION", "")
            .strip()
            .lower()
            not in _TRUE,
            heartbeat_patterns=tuple(p.strip() for p in extra.split(",") if p.strip()),
            vectors=vectors,
            timeout_seconds=timeout if timeout > 0 else None,
            nudge_interval=max(0, int(nudge)),
            contradiction_invalidate=env.get("MEMTROVE_CONTRADICTION_INVALIDATE", "")
            .strip()
            .lower()
            in _TRUE,
            pretool_inject=env.get("MEMTROVE_PRETOOL_INJECT", "").strip().lower() in _TRUE,
            focus_root=_absolute(env.get("MEMTROVE_FOCUS_ROOT", "")),
            session_focus=env.get("MEMTROVE_SESSION_FOCUS", "").strip(),
            warnings=tuple(warnings),
        )


def _absolute(value: str) -> Path | None:
    return Path(os.path.abspath(os.path.expanduser(value.strip()))) if value.strip() else None


def _claude_dir(env: Mapping[str, str]) -> Path:
    value = env.get("CLAUDE_CONFIG_DIR", "").strip()
    if value and os.path.isabs(value):
        return Path(value)
    return Path(env.get("HOME") or Path.home()) / ".claude"


def _number(env: Mapping[str, str], name: str, default: float, warnings: list[str]) -> float:
    value = env.get(name, "").strip()
    if not value:
        return default
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):  # inf and nan too: a wait of inf seconds raises
        warnings.append(f"{name} must be a number, not {value[:40]!r}; using {default:g}")
        return default
    return number
