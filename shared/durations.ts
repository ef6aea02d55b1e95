/**
 * Durations as people read them, one formatter for every text the project
 * writes: settings and their docs, messages to clients and models, operator
 * tables.
 *
 * - exact (the default): the largest unit that divides it, `7 days`,
 *   `1 hour`, `30 s`, else milliseconds, `1500 ms`: for configured values,
 *   which are round;
 * - `approximate`: the two largest units, rounded down, `3d 4h`, `5m 10s`,
 *   `800ms`: for ages and waits measured at a moment.
 */
const UNITS = [
  { size: 86_400_000, one: ' day', many: ' days', short: 'd' },
  { size: 3_600_000, one: ' hour', many: ' hours', short: 'h' },
  { size: 60_000, one: ' minute', many: ' minutes', short: 'm' },
  { size: 1000, one: ' s', many: ' s', short: 's' },
] as const;

export function formatDuration(ms: number, options: { approximate?: boolean } = {}): string {
  if (options.approximate) return approximate(ms);
  for (const { size, one, many } of UNITS) {
    if (ms !== 0 && ms % size === 0) return `${ms / size}${ms === size ? one : many}`;
  }
  return `${ms} ms`;
}

function approximate(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(Math.round(ms));
  if (rest < 1000) return `${sign}${rest}ms`;
  const parts: string[] = [];
  for (const { size, short } of UNITS) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${short}`);
      rest %= size;
    }
  }
  return sign + parts.slice(0, 2).join(' ');
}
