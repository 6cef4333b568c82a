"""The service's web pages: server-rendered HTML (Jinja2) with SVG charts drawn on the server; no JavaScript.

The app factory (solbench.service.app.create_app) mounts `router` at /.
"""

from solbench.service.web.router import router

__all__ = ["router"]
