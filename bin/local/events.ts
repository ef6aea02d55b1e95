/**
 * The local stack's lifecycle events: with no EventBridge here, `npm start`
 * prints each event the functions publish as one compact line, so a tool
 * author sees what an approver's rule would receive when deployed.
 */
import type { EventPublisher } from '../../shared/events/publisher.ts';
import type { TaskEvent } from '../../shared/events/task-events.ts';

/** Prints every event it is given (default: to stdout) and accepts them all. */
export class PrintedEvents implements EventPublisher {
  readonly #write: (line: string) => void;

  constructor(write: (line: string) => void = (line) => void process.stdout.write(line)) {
    this.#write = write;
  }

  async put(events: readonly TaskEvent[]): Promise<readonly TaskEvent[]> {
    for (const event of events) this.#write(`${eventLine(event)}\n`);
    return [];
  }
}

/**
 * One event as a line: `event: <detail-type> <tool> <task id>`, then for a
 * question what is asked, where and until when, for an end its duration.
 */
export function eventLine(event: TaskEvent): string {
  const { detail } = event;
  const head = `event: ${event.detailType} ${detail.tool} ${detail.taskId}`;
  if (detail.status === 'input_required') {
    const asked = detail.questions.map((question) => JSON.stringify(question.message)).join(', ');
    const where = detail.taskUrl ? ` at ${detail.taskUrl}` : '';
    const until = detail.deadline ? ` by ${detail.deadline}` : '';
    return `${head}: ${asked}, answer${where}${until}`;
  }
  const code = detail.errorCode === undefined ? '' : ` (error ${detail.errorCode})`;
  return `${head}: ${detail.status} after ${(detail.durationMs / 1000).toFixed(1)} s${code}`;
}
