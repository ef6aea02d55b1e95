/**
 * A tool that declares what it needs: a secret (Secrets Manager) and read
 * access to objects of an S3 bucket. It reads the secret and reports a
 * fingerprint of it (never the value); it does not call S3, so it runs
 * without AWS. The stack tests check the grants it yields; the local stack
 * serves it with `TASKS_TOOLSET=test`, reading the secret from the
 * environment or `settings.local.json`.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { defineTool } from '../../../shared/runtime/tool.ts';

export const REPORT_BUCKET_OBJECTS = 'arn:aws:s3:::example-reports/*';

export const reportDigest = defineTool({
  name: 'report_digest',
  description: 'Reads the reporting API key and reports its fingerprint.',
  inputSchema: z.object({}),
  execution: 'task',
  needs: {
    settings: { apiKey: { secretsManager: 'report-digest/api-key' } },
    permissions: [{ actions: ['s3:GetObject'], resources: [REPORT_BUCKET_OBJECTS], why: 'Reads any report object of the example-reports bucket, whose keys are not known in advance.' }],
  },
  handler: async (_args, ctx) => {
    const apiKey = await ctx.setting('apiKey');
    const fingerprint = createHash('sha256').update(apiKey).digest('hex').slice(0, 12);
    return { content: [{ type: 'text', text: `API key fingerprint ${fingerprint}` }], structuredContent: { fingerprint, length: apiKey.length } };
  },
});
