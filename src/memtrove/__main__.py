"""``python -m memtrove`` (and the ``memtrove`` script): the CLI.

``memtrove hook NAME`` skips the CLI entirely: a hook runs on every prompt, so its process
must not pay for importing Typer and Rich (see :mod:`memtrove.hooks.runner`).
"""

import sys

__all__ = ["main"]


def main() -> None:
    """Dispatch ``hook NAME`` to the hook runner before anything else is imported."""
    arguments = sys.argv[1:]
    if len(arguments) >= 2 and arguments[0] == "hook" and not arguments[1].startswith("-"):
        from memtrove.hooks.runner import main as run_hook

        sys.exit(run_hook(arguments[1:], hard_exit=True))  # hard_exit: does not return
    from memtrove.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
