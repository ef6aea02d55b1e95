# Raw HTTP: start long_computation as a task, then poll tasks/get until it ends (needs curl and jq).
URL=${MCP_URL:-http://127.0.0.1:3000/mcp}
META='{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}'
rpc() { # method, name (tools/call) or taskId (tasks/*), params
  curl -s "$URL" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $1" -H "Mcp-Name: $2" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":$(jq -c --argjson meta "$META" '. + {_meta: $meta}' <<<"$3")}"
}
TASK=$(rpc tools/call long_computation '{"name":"long_computation","arguments":{"seconds":2}}' | jq -r .result.taskId)
while :; do
  TASK_JSON=$(rpc tasks/get "$TASK" "{\"taskId\":\"$TASK\"}")
  STATUS=$(jq -r .result.status <<<"$TASK_JSON")
  case $STATUS in completed|failed|cancelled) break ;; esac
  sleep "$(jq '.result.pollIntervalMs / 1000' <<<"$TASK_JSON")"
done
jq -c '.result | {status, result}' <<<"$TASK_JSON"
