"""The one-file executable's entry point: ``fate-bridge``, as the installed command runs it."""

import sys

from bridge.cli import main

if __name__ == "__main__":
    sys.exit(main())
