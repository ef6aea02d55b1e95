import * as z from 'zod';
import { defineWorkflowTool } from '#tool';

/**
 * A release deployed by a Step Functions state machine
 * (`workflows/deploy-release.asl.json`), as one task: checks, then a person
 * approves (the question `approval`, `{ approve, comment? }`, asked by a
 * task-token state and answered on the task like `approval_gate`'s), then the
 * release goes out region by region (a `Map` with a progress state and a
 * `Wait`), then it is verified. A rejection takes the machine's `Catch` path
 * and ends the task with a tool error naming the reason. The deployment
 * itself is simulated: swap the `Pass` and `Wait` states for your own.
 */
export const deployRelease = defineWorkflowTool({
  name: 'deploy_release',
  title: 'Deploy a release',
  description:
    'Deploys a release to a list of regions through a workflow: checks, an approval by a person, a rollout region by region, a ' +
    'verification. One call: the task follows the workflow to its end.',
  inputSchema: z.object({
    release: z
      .string()
      .regex(/^[\w.@/-]{1,100}$/)
      .describe('What to deploy, e.g. "web@1.4.2"'),
    regions: z
      .array(z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/))
      .min(1)
      .max(10)
      .describe('Where, in order, e.g. ["eu-west-1", "us-east-1"]'),
  }),
  workflow: {
    name: 'deploy-release',
    definition: 'functions/tools/workflows/deploy-release.asl.json',
    text: (output) => {
      const { release, deployed } = output as { release?: string; deployed?: Array<{ region?: string }> };
      return `Deployed ${release} to ${(deployed ?? []).map((step) => step.region).join(', ')} and verified it`;
    },
  },
});
