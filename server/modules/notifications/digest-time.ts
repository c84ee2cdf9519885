// When a daily digest goes out: plain date arithmetic, shared by the fan-out that writes a digest row
// already scheduled (rows.ts; the background worker's fan-out loads no drizzle) and the digest mailer.

/** The next moment at `hour` o'clock UTC strictly after `now`. */
export function nextDigestAt(now: Date, hour: number): Date {
  const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), hour))
  if (at <= now) at.setUTCDate(at.getUTCDate() + 1)
  return at
}
