"""mem0 dream plugin: an embedded mem0-compatible memory store, its MCP server, and dream.

Keep this module free of imports: `scripts/parse_mem0_config.py` imports the
package's config parser with a bare python3, and the MCP server must start fast.
"""

__version__ = "0.1.0"
