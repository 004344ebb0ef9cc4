"""Entry point of the frozen build: the same ``ambry`` command as the console script."""

import sys

from core.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
