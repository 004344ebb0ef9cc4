"""``python -m ambry``: the same as the ``ambry`` command."""

import sys

from ambry import main

if __name__ == "__main__":
    sys.exit(main())
