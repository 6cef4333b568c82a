"""The one error a builder raises."""


class BuildError(Exception):
    """The solution could not be built or its entry point not found; the message is shown to the user."""
