"""`mem0-server`: the Mem0 platform's REST routes and MCP over streamable HTTP, over the same
store (docs/server.md). An edge like the CLI and the stdio server: it maps HTTP onto
`operations`, nothing more."""
