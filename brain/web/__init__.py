"""`brain serve`: a read-only local web view of a Brain (Starlette, jinja2 templates, vendored JS)."""
