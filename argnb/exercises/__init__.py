"""Exercise tooling: turning solution notebooks into student notebooks (see :mod:`.release`)."""
