"""``python -m argnb.exercises release [--check] | grade ... | report ...``."""

import sys

from argnb.exercises.cli import main

if __name__ == "__main__":
    sys.exit(main())
