/** One JSON log line. Callers pass ids and outcomes only, never arguments, answers or tokens. */
export function log(event: Record<string, unknown>): void {
  console.log(JSON.stringify(event));
}
