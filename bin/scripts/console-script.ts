/**
 * The console's page script, built: `shared/console/client/live.ts` bundled
 * by esbuild (one IIFE, minified) into `shared/console/live-script.ts`, the
 * string every live page inlines under its CSP nonce. The local stack and
 * the deployed function both import that module, so `npm start` serves the
 * very bytes a deployment serves. `npx tsx bin/scripts/console-script.ts`
 * rewrites it; `test/infra/console-script.test.ts` fails while it is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ENTRY = fileURLToPath(new URL('../../shared/console/client/live.ts', import.meta.url));
/** The built module. */
export const LIVE_SCRIPT_MODULE = fileURLToPath(new URL('../../shared/console/live-script.ts', import.meta.url));

/** The text of `shared/console/live-script.ts` as the client's source builds it now. */
export async function liveScriptModule(): Promise<string> {
  const built = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
  });
  const code = built.outputFiles[0]?.text.trim() ?? '';
  // Inlined in a <script> element: its text must not end the element or open a comment there.
  if (/<\/script|<!--/i.test(code)) throw new Error('The console script holds "</script" or "<!--": it cannot be inlined');
  return [
    '// Built from shared/console/client/ by bin/scripts/console-script.ts: edit the source there, then run',
    '// `npx tsx bin/scripts/console-script.ts` (test/infra/console-script.test.ts fails while this is stale).',
    '',
    "/** The console pages' one script (IIFE), inlined under the response's CSP nonce. */",
    `export const LIVE_SCRIPT = ${JSON.stringify(code)};`,
    '',
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const text = await liveScriptModule();
  writeFileSync(LIVE_SCRIPT_MODULE, text);
  console.log(`${LIVE_SCRIPT_MODULE}: ${text.length} characters`);
}
