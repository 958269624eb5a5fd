"""``python -m argnb.exercises release [--check] | grade ... | report ...``."""

import sys

from argnb.exercises.cli import main
from argnb.exercises.runner import skip_slow_imports

if __name__ == "__main__":
    skip_slow_imports()  # this process reads notebooks and never checks a schema's formats
    sys.exit(main())
