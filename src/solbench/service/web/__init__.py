"""The service's web pages: server-rendered HTML (Jinja2) with SVG charts drawn on the server; no JavaScript."""
