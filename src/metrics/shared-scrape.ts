/**
 * One scrape shared by every GET /metrics that comes while it runs, and until `reuseMs` after it
 * began: twenty scrapers asking at once cost one scrape, however long it takes (a cluster's
 * gathers every worker's, up to 2 s, cluster/cluster-metrics.ts), and scrapers asking again and
 * again cost at most one scrape per `reuseMs`, never two at once.
 */

/** `scrape` behind the sharing; `clock` is milliseconds on a monotonic clock. */
export function sharedScrape (scrape: () => Promise<string>, reuseMs: number, clock: () => number): () => Promise<string> {
  let latest: { text: Promise<string>, startedAt: number, running: boolean } | undefined
  return () => {
    // Reused until reuseMs after it began, so that a slow scrape is followed by a fresh one at
    // once; but while it runs it is joined, never run twice.
    if (latest !== undefined && (latest.running || clock() - latest.startedAt < reuseMs)) return latest.text
    const current = { text: scrape(), startedAt: clock(), running: true }
    latest = current
    current.text.then(
      () => { current.running = false },
      // A failed scrape is not kept: the next request tries again.
      () => { if (latest === current) latest = undefined }
    )
    return current.text
  }
}
