"""MCP servers as catalogs, imported live: the SDK client (`client.py`), the manifest a listing becomes
(`domain/listing.py`, pure), the live import and re-import (`services.py`) and its Celery task (`tasks.py`).

The `mcp-tools/v1` dialect itself, the hint defaults and the governance overlay are catalog code
(catalog/domain/manifest/mcp.py, catalog/domain/mcp.py); so is the server's row (catalog/models/mcp.py).
"""
