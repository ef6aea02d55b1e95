/** The printed report: each scenario's counts next to the design minimum, then its cost at list prices. */
import { detail, type Figures, type PollCost, type Row } from './aws-counting.ts';
import { GET_MIN } from './minima.ts';
import { costReport } from './pricing.ts';

/** Measured over minimum, as `1.07×` (`—` or `+n` when the minimum is zero). */
function ratio(measured: number, minimum: number): string {
  if (minimum === 0) return measured === 0 ? '—' : `+${measured}`;
  return `${(measured / minimum).toFixed(2)}×`;
}

/** The figures the reports show, as column titles and keys. */
export const FIGURE_COLUMNS: ReadonlyArray<[string, keyof Figures]> = [
  ['DynamoDB RCU', 'rcu'],
  ['DynamoDB WCU', 'wcu'],
  ['DynamoDB requests', 'ddbRequests'],
  ['SQS requests', 'sqsRequests'],
  ['worker invocations', 'invocations'],
  ['EventBridge events', 'events'],
];

/** Prints the report of the measured scenarios and of one `tasks/get` of each finished task. */
export function report(rows: Row[], gets: PollCost[]): void {
  const columns = FIGURE_COLUMNS;
  const out: string[] = [];
  out.push('', 'AWS cost per task, create → result, measured on the local stack (polling excluded), next to the design minimum', '');
  out.push(`| scenario | ${columns.map(([title]) => `${title} | min | ratio`).join(' | ')} |`);
  out.push(`|---|${columns.map(() => '--:|--:|--:').join('|')}|`);
  for (const row of rows) {
    const cells = columns.map(([, key]) => `${row.measured[key]} | ${row.minimum[key]} | ${ratio(row.measured[key], row.minimum[key])}`);
    out.push(`| ${row.scenario} | ${cells.join(' | ')} |`);
  }
  out.push('');
  out.push('Where the units come from (WCU = table, as dynalite reports it, + the indexes (active and list), by AWS rules):');
  for (const row of rows) {
    const computed =
      row.meter.computedUnits > 0 ? `; ${row.meter.computedUnits} figure(s) computed by AWS rules where dynalite reports none or 0` : '';
    out.push(`- ${row.scenario}: WCU ${row.meter.tableWcu} table + ${row.meter.indexWcu} index${computed}; ${detail(row.meter)}`);
  }
  out.push('');
  out.push('One tasks/get (per call, the client chooses how often to poll):');
  for (const get of gets) {
    out.push(
      `- of the ${get.scenario}'s finished task: ${get.rcu} RCU in ${get.ddbRequests} DynamoDB request(s) (min ${GET_MIN.rcu} RCU, ` +
        `${GET_MIN.ddbRequests} request; ratio ${ratio(get.rcu, GET_MIN.rcu)}); ${get.commands}`,
    );
  }
  out.push('');
  out.push('Minimum = what the design needs: rows under 1 KB (1 WCU per write) and 4 KB (1 RCU per strongly consistent read);');
  out.push('simple = create + claim + finish, SQS send + receive + delete, 1 invocation; input round = simple + suspend + answer');
  out.push('(read + write) + second claim, SQS and invocation ×2; 10-step = simple + 1 checkpoint query + 10 checkpoint puts.');
  out.push('Index writes: enter 1 (create), leave 1 (finish); moving sweepAt costs 2: a lease renewal (claims and progress');
  out.push('writes leave sweepAt alone, so a run within its first lease never moves), and a wait for input starting (sweepAt');
  out.push('becomes its deadline) and ending by an answer; partial answers leave it alone. The list index: 1 at create (where a');
  out.push("console lists tasks, as npm start's does; a deployed open endpoint's console lists none: 1 WCU less), never again:");
  out.push('its keys never change. Listing a page: a query per list');
  out.push('partition (keys only) and one eventually consistent BatchGetItem, half a read unit per 4 KB of each listed row.');
  out.push("With an issuer, the cap on unfinished tasks (on by default, 100 per principal): 2 writes of the principal's set");
  out.push('(take at create, free at the end), 1 WCU each while the set holds fewer than about 25 ids, more as it grows.');
  out.push('EventBridge: one lifecycle event at each end (the input round asks the client, not a person: no question event).');
  out.push("Not counted: the mapping's empty long polls (constant, not per task). Corrected: dynalite reports 0 RCU for a");
  out.push("Query that returns nothing (a first run's checkpoint query); AWS bills the minimum read (1 RCU, strongly consistent).");
  out.push(...costReport(rows, gets));
  console.log(out.join('\n'));
}
