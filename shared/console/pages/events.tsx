/**
 * The lifecycle events a task's row implies as it is now (`eventsOf`, the
 * same function the publishers use): what the deployment's event bus was sent
 * for it — a question waiting for a person, or its end.
 */
import type { TaskEvent } from '../../events/task-events.ts';
import { timeNode } from '../words.ts';
import { Nodes } from './nodes.tsx';

export function TaskEvents(props: { events: readonly TaskEvent[] | undefined; now: number }) {
  if (!props.events || props.events.length === 0) return null;
  return (
    <section id="events">
      <h2>Events</h2>
      <p>Sent to this deployment's event bus, where rules pass them on (to a chat, an email, the next step of a pipeline).</p>
      <ul>
        {props.events.map((event) => {
          const deadline = 'deadline' in event.detail ? event.detail.deadline : undefined;
          return (
            <li data-event={event.detailType}>
              {`${event.detailType}, `}
              <Nodes nodes={[timeNode(event.time, props.now)]} />
              {deadline ? `; deadline ${deadline}` : ''}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
