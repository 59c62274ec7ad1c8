"""Pure code of the live MCP import (no Django)."""
