"""``python -m studio`` runs the command line (see :mod:`studio.cli`)."""

import sys

from studio.cli import main

if __name__ == "__main__":
    sys.exit(main())
