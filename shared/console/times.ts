/**
 * Times as a person reads them: relative words ("5 minutes ago", "in 3
 * days") and an absolute time. The server writes both into a page; the
 * page's script rewrites them as time passes, the absolute one in the
 * browser's own zone. Neither DOM nor Node here: both bundles import it.
 */

const UNITS: Array<[number, string]> = [
  [365 * 86_400_000, 'year'],
  [30 * 86_400_000, 'month'],
  [7 * 86_400_000, 'week'],
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'minute'],
];

/** `at` relative to `now`, as a person says it: "just now", "5 minutes ago", "in 3 hours". */
export function relativeTime(at: number, now: number): string {
  const span = Math.abs(now - at);
  if (span < 45_000) return 'just now';
  const [size, unit] = UNITS.find(([ms]) => span >= ms) ?? UNITS[UNITS.length - 1]!;
  const count = Math.max(1, Math.round(span / size));
  const amount = `${count} ${unit}${count === 1 ? '' : 's'}`;
  return at <= now ? `${amount} ago` : `in ${amount}`;
}

/** `at` as an absolute time in UTC ("6 Dec 2026, 14:05 UTC"): the page's script rewrites it in the browser's zone. */
export function absoluteUtc(at: number): string {
  const d = new Date(at);
  const month = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getUTCMonth()];
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCDate()} ${month} ${d.getUTCFullYear()}, ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}
