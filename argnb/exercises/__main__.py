"""``python -m argnb.exercises release [--check]``."""

import sys

from argnb.exercises.release import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["release"]:
        args = args[1:]
    sys.exit(main(args))
