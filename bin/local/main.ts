/**
 * `npm start`: the MCP Tasks server on this machine, no AWS account needed,
 * serving the catalogue `TASKS_TOOLSET` names (`product` by default, as
 * deployed). `serve.ts` runs it; a project using the package runs the same
 * with its own tools (`mcp-tasks start`).
 *
 * Its variables (`PORT`, `LOCAL_*`: port, data directory, queue and sweep
 * settings, `LOCAL_AUTH=1` for tokens) are in `environment.ts`, the
 * functions' own (`TASKS_*`) in `shared/config.ts`; docs/configuration.md
 * lists both.
 */
import { serveLocally } from './serve.ts';

await serveLocally({
  tryIt: (url) => `Try it with the CLI (in this repository):
  npx mcp-tasks --url ${url} call long_computation '{"seconds":2}'
  npx mcp-tasks --url ${url} call approval_gate '{"action":"deploy"}'
  npx mcp-tasks --url ${url} call deploy_release '{"release":"web@1.4.2","regions":["eu-west-1","us-east-1"]}'

Or with the MCP Inspector's CLI (the pinned 2.x, run by the project's Node 22; it cannot answer questions):
  npm run inspector -- --cli ${url} --protocol-era modern --method tools/call --tool-name long_computation --tool-args-json '{"seconds":2}'
`,
});
