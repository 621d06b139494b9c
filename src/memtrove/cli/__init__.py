"""The ``memtrove`` command line: thin adapters over :class:`memtrove.Vault`.

The Typer application is :mod:`memtrove.cli.application`; this package loads it on first use
of ``app`` or ``main``, so that :mod:`memtrove.cli.lean` (the read commands without Typer and
Rich) and the other light entry points can import from here cheaply.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memtrove.cli.application import app, main

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from memtrove.cli import application

        return getattr(application, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
