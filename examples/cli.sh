# The mcp-tasks CLI (from this repository, after npm ci). On a terminal, leave out --answer to be asked.
npx mcp-tasks --url "${MCP_URL:-http://127.0.0.1:3000/mcp}" \
  call approval_gate '{"action":"deploy web@1.4.2"}' --answer approval.approve=true
