/**
 * A simulated outside job system with webhooks, for `external_job`'s
 * callback mode under `npm start`: `POST /jobs` with `{ jobId, input,
 * durationSeconds, callbackUrl }` accepts a job (the same `jobId` again is
 * the same job), and `durationSeconds` later the system posts
 * `{ "result": { jobId, output } }` to the callback URL, over HTTP, as a
 * real one would. `DELETE /jobs/<id>` cancels a job. Its jobs live in this
 * process's memory: a stack that is killed forgets them (the task then
 * waits until its callback's timeout).
 *
 * It binds 127.0.0.1 and logs ids only, never a callback URL (its token is
 * the capability to complete the task).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorName, type Log } from '../../shared/log.ts';
import { closeServer } from './http.ts';

export interface JobSystem {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 64 * 1024;

export async function startJobSystem(log: Log): Promise<JobSystem> {
  const jobs = new Map<string, NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const answer = (status: number) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status }));
    };
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method === 'DELETE' && path.startsWith('/jobs/')) {
      const id = decodeURIComponent(path.slice('/jobs/'.length));
      const timer = jobs.get(id);
      clearTimeout(timer);
      jobs.delete(id);
      return answer(timer ? 200 : 404);
    }
    if (req.method !== 'POST' || path !== '/jobs') return answer(404);
    readJson(req).then(
      (job) => {
        if (!job) return answer(400);
        if (!jobs.has(job.jobId))
          jobs.set(
            job.jobId,
            setTimeout(() => void callBack(job), job.durationSeconds * 1000),
          );
        answer(202);
      },
      () => answer(400),
    );
  });

  async function callBack(job: Job): Promise<void> {
    jobs.delete(job.jobId);
    const result = { jobId: job.jobId, output: `processed ${job.input.length} characters` };
    try {
      const response = await fetch(job.callbackUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ result }),
      });
      log({ event: 'job-system-called-back', jobId: job.jobId, status: response.status });
    } catch (error) {
      log({ event: 'job-system-error', jobId: job.jobId, error: errorName(error) });
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const timer of jobs.values()) clearTimeout(timer);
      jobs.clear();
      await closeServer(server, 1000);
    },
  };
}

interface Job {
  jobId: string;
  input: string;
  durationSeconds: number;
  callbackUrl: string;
}

async function readJson(req: IncomingMessage): Promise<Job | undefined> {
  let text = '';
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > MAX_BODY_BYTES) return undefined;
  }
  const job = JSON.parse(text) as Partial<Job>;
  const valid =
    typeof job.jobId === 'string' &&
    typeof job.input === 'string' &&
    typeof job.callbackUrl === 'string' &&
    typeof job.durationSeconds === 'number';
  return valid ? (job as Job) : undefined;
}
