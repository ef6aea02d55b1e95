/**
 * The fallback run docs/connecting.md shows ("A fallback run"), made by
 * running it: a plain 2026-07-28 client declaring `roots` and `elicitation`
 * (as Claude Code's `-p` mode does) against `npm start`'s defaults, calling a
 * computation that outlasts the call and `approval_gate`, and the person
 * answering with the command the model was given. `fallback-transcript.test.ts`
 * checks the page against a fresh run (ids and times aside);
 * `npx tsx test/e2e/transcript.ts` runs it and rewrites the page's block.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startLocalStackProcess } from '../support/local-stack.ts';
import { resultOf, rpc } from '../support/wire.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CONNECTING_PAGE = `${ROOT}docs/connecting.md`;
const BEGIN = '<!-- transcript: fallback (npx tsx test/e2e/transcript.ts rewrites it) -->';
const END = '<!-- end of transcript -->';
const DECLARED = { roots: {}, elicitation: {} };

type Reply = { content?: Array<{ text?: string }>; structuredContent?: Record<string, unknown>; _meta?: unknown };

/** A result as the page shows it: `_meta` left out, each text wrapped at its `\n`s. */
function shown(result: Reply): string {
  const { _meta: _left, ...rest } = result;
  return JSON.stringify(rest, null, 2).replace(/\\n/g, '\\n\n     ');
}

/** Runs the session against the endpoint at `url` and gives the page's block (with its ids and times). */
export async function fallbackTranscript(url: string): Promise<string> {
  const started = Date.now();
  const lines: string[] = [];
  const call = async (name: string, args: Record<string, unknown>, shownArgs = args): Promise<Reply> => {
    const at = (Date.now() - started) / 1000;
    const response = await rpc(url, 'tools/call', { name, arguments: args }, { capabilities: DECLARED, timeoutMs: 60_000 });
    const result = resultOf(response) as Reply;
    const took = (Date.now() - started) / 1000 - at;
    lines.push(`--- t=${at.toFixed(1)} s  tools/call ${name} ${JSON.stringify(shownArgs)}  (answered in ${took.toFixed(1)} s)`);
    lines.push(shown(result), '');
    return result;
  };
  const taskIdOf = (reply: Reply) => String(reply.structuredContent?.['taskId']);

  const computing = await call('long_computation', { seconds: 25, label: 'report' });
  await call('task_status', { taskId: taskIdOf(computing), waitSeconds: 20 });

  const gate = await call('approval_gate', { action: 'deploy web@1.4.2 to production' });
  const gateId = taskIdOf(gate);
  await call('task_answer', { taskId: gateId, answers: { approval: { approve: true } } });
  const printed = `node bin/mcp-tasks.js --url ${url} answer ${gateId}`;
  const text = (gate.content ?? []).map((block) => block.text ?? '').join('\n');
  if (!text.includes(printed)) throw new Error(`the view does not name the person's command: ${text}`);
  const answered = await new Promise<string>((resolve, reject) => {
    const [, ...args] = printed.split(' ');
    execFile(process.execPath, [...args, '--answer', 'approval.approve=true'], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${printed}: ${stderr}`)) : resolve(stdout.trim()),
    ).stdin?.end();
  });
  lines.push(`--- the person runs: ${printed} --answer approval.approve=true`, answered, '');
  await call('task_status', { taskId: gateId, waitSeconds: 20 });
  return lines.join('\n').trimEnd();
}

/** The block as it stands in `page`. */
export function transcriptIn(page: string): string {
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`docs/connecting.md has no transcript block (${BEGIN} … ${END})`);
  return page
    .slice(begin + BEGIN.length, end)
    .trim()
    .replace(/^```text\n|\n```$/g, '');
}

/** What may differ from one run to the next: task ids, the endpoint's port, the times and timestamps, how far the computation had come. */
export function normalized(transcript: string): string {
  return transcript
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<task id>')
    .replace(/http:\/\/127\.0\.0\.1:\d+/g, 'http://127.0.0.1:<port>')
    .replace(/t=[\d.]+ s/g, 't=<s>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>')
    .replace(/answered in [\d.]+ s/g, 'answered in <s>')
    .replace(/Computed \d+ of (\d+) s/g, 'Computed <n> of $1 s');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const stack = await startLocalStackProcess();
  try {
    const transcript = await fallbackTranscript(stack.url);
    const page = readFileSync(CONNECTING_PAGE, 'utf8');
    const old = transcriptIn(page);
    writeFileSync(CONNECTING_PAGE, page.replace(old, transcript));
    console.log(`docs/connecting.md: the transcript rewritten (${transcript.split('\n').length} lines)`);
  } finally {
    await stack.stop();
  }
}
