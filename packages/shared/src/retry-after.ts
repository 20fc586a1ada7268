/**
 * `Retry-After` as milliseconds from `now`: delta-seconds (digits only) or an IMF-fixdate HTTP date (RFC 9110
 * §10.2.3), a past date reading as 0; undefined when absent or anything else (a negative or fractional number, another
 * date format). The client's retries and the server's webhook worker read it with this one function.
 */
export function parseRetryAfter(header: string | null | undefined, now = Date.now()): number | undefined {
  const v = header?.trim();
  if (!v) return undefined;
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
