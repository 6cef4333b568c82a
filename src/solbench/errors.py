"""Root of solbench's exception tree: every error a user can fix derives from SolbenchError."""


class SolbenchError(Exception):
    """An error caused by input the user can fix; the CLI prints its message as one line, exit 2."""
