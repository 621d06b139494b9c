"""``python -m memtrove.hooks NAME``: run one hook without loading the CLI."""

import sys

from memtrove.hooks.runner import main

sys.exit(main(sys.argv[1:], hard_exit=True))
