"""Notebook widgets (one file each). They read transcripts and call protocols; never a client library."""
