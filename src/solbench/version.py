"""solbench's version, at the bottom of the layers.

Traces, the result cache's key and the server record it, from every layer. It lives here rather than
in `solbench/__init__.py` because that module is the public facade: it imports the API on first
use, so a layer that imported it for the version would import the layers above it in a circle.
"""

__version__ = "0.1.0"
