/**
 * The timeline section of a task's page: the picture and its text
 * alternative (`../timeline.ts`), redrawn by the page's script from the live
 * route's `timelineNodes`.
 */
import type { UiNode } from '../nodes.ts';
import { Nodes } from './nodes.tsx';

export function Timeline(props: { nodes: readonly UiNode[] | undefined }) {
  if (!props.nodes) return null;
  return (
    <section id="timeline" aria-labelledby="timeline-heading">
      <h2 id="timeline-heading">Timeline</h2>
      <div id="timeline-picture">
        <Nodes nodes={props.nodes} />
      </div>
    </section>
  );
}
