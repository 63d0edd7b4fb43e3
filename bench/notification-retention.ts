/**
 * What one statement of the deliveries' retention holds the embedded database's thread for: a
 * fresh embedded database (the migrated template, vacuuming off) with BENCH_RETENTION_ROWS
 * (200,000) delivered rows of 10,000 users, analysed; then `pruneSettled(before, 500)` called
 * until half of them are gone, each call timed with performance.now(). Prints p50 and max. The
 * figures are in bench/results.md, "The deliveries' retention". `npx tsx bench/notification-retention.ts`
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/db/open-database.js'
import { RETENTION_BATCH_SIZE } from '../src/notifications/delivery-retention.js'
import { NotificationStore } from '../src/notifications/notification-store.js'
import { copyTemplateTo } from '../scripts/pglite-template.js'

const ROWS = Number(process.env.BENCH_RETENTION_ROWS ?? 200_000)

const dataDir = mkdtempSync(join(tmpdir(), 'bench-retention-'))
try {
  await copyTemplateTo(dataDir)
  const db = await openDatabase({ dataDir, autovacuum: false })
  try {
    await db.query(
      `INSERT INTO notification_deliveries (address, channel, target, notification_id, header, path, status, created_at_ms, delivered_at_ms)
       SELECT 'P-' || (i % 10000), 'bastyon', 'https://1.pocketnet.app:8899', 'n-' || i, 'Your order shipped', '/orders/42', 'delivered', i, i
       FROM generate_series(1, $1::integer) i`,
      [ROWS]
    )
    await db.exec('ANALYZE notification_deliveries')
    const store = new NotificationStore(db, { now: () => 0 })
    const times: number[] = []
    for (;;) {
      const started = performance.now()
      const deleted = await store.pruneSettled(ROWS / 2, RETENTION_BATCH_SIZE)
      times.push(performance.now() - started)
      if (deleted < RETENTION_BATCH_SIZE) break
    }
    times.sort((a, b) => a - b)
    console.log(`${times.length} statements of up to ${RETENTION_BATCH_SIZE} rows over ${ROWS} rows: p50 ${times[Math.floor(times.length / 2)]?.toFixed(1)} ms, max ${times.at(-1)?.toFixed(1)} ms`)
  } finally {
    await db.close()
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
