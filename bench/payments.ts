/**
 * `npm run bench:payments`: issue #26's benchmark, in one run. The service as `buildApp` makes
 * it, in this process (the benchmark calls `app.payments` and hears its events directly), with
 * payments on, its embedded store (PGlite) in a temporary DATA_DIR and the chain reported through
 * the node's WebSocket (EVENTS_INGEST); the node is the emulator, in a process of its own, paid
 * and mined through a small control server of its own (`--emulator` below). On two CPUs or more
 * the service runs on the server CPU and the emulator on the load CPU (bench/harness.ts).
 *
 * 1. createInvoice: BENCH_PAYMENTS_PENDING (10,000) invoices created, then
 *    BENCH_PAYMENTS_CREATIONS (2,000) more timed one after the other: p50, p99, max.
 * 2. Node calls per block, with all of those pending: blocks carrying 0, 1 and 5 payments to the
 *    receiver, and blocks confirming earlier ones; the emulator's calls between two blocks, by
 *    method, against 2 (the event source's `getlastblocks` and `getnotifications`) plus one per
 *    payment in the block plus one per payment awaiting confirmations.
 * 3. Confirmation latency: from the emulator's push of the confirming block on its WebSocket to
 *    the invoice's `confirmed` transition written in the store (its `payment:<id>` event, which
 *    the service announces once the transaction committed), and to the app's `confirmed` handler
 *    (through the outbox), over BENCH_PAYMENTS_LATENCY (50) payments, BENCH_PAYMENTS_PER_BLOCK
 *    (5) to a block: once for invoices needing 2 confirmations (the block after the paying one
 *    confirms: the watcher's per-block re-check), once for invoices needing 1 (the paying block
 *    confirms: the `transaction` event's check).
 *
 * The two processes' monotonic clocks are tied by the round trip of a few pings (the offset of
 * the fastest), so a push time taken in the emulator is read on this process's clock.
 * Writes its tables into bench/results.md, between the payments markers.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createEmulator } from '../devnode/server.js'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import type { InvoiceView } from '../src/payments/payments-service.js'
import { CPUS, cpuMicros, cpuSeconds, startChild, stop } from './harness.js'
import { writeResultsSection } from './results-file.js'

const PENDING = Number(process.env.BENCH_PAYMENTS_PENDING ?? 10_000)
const CREATIONS = Number(process.env.BENCH_PAYMENTS_CREATIONS ?? 2000)
const LATENCY_PAYMENTS = Number(process.env.BENCH_PAYMENTS_LATENCY ?? 50)
const PER_BLOCK = Number(process.env.BENCH_PAYMENTS_PER_BLOCK ?? 5)
/** The service's default for its invoices: a payment is re-checked in the block after its own. */
const CONFIRMATIONS = 2
const PRICE_SAT = 150_000_000
/** No new call to the emulator for this long: the service is done with the block. */
const QUIET_MS = 300
const HANG_AFTER_MS = 60_000

/** The emulator's control requests (see emulatorProcess). */
type Control =
  | { op: 'info' }
  | { op: 'clock' }
  | { op: 'pay', memos: string[], amountSat: number }
  | { op: 'mine' }
  | { op: 'callCount' }
  | { op: 'takeCalls' }

interface EmulatorInfo { url: string, payer: string, receiver: string, registrations: number }

async function bodyOf (request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * The node, in a process of its own: the emulator, and beside it a control server on loopback
 * that pays (a payer's transaction to the receiver with the invoice's memo), mines, reads this
 * process's clock, and hands over the calls the node received since the last time.
 */
async function emulatorProcess (): Promise<void> {
  const node = await createEmulator({ port: 0 })
  const [payer, receiver] = node.dataset.users.map(user => user.address) as [string, string]
  const answer = (control: Control): unknown => {
    switch (control.op) {
      case 'info': return { url: node.url, payer, receiver, registrations: node.webSocket.registrations().length } satisfies EmulatorInfo
      case 'clock': return { now: performance.now() }
      case 'pay': return control.memos.map(memo => node.addTransaction({
        inputs: [{ address: payer, amount: control.amountSat + 100_000_000 }],
        // As sdk.payment pays: the amount to the receiver, the memo, the change back.
        outputs: [{ address: receiver, amount: control.amountSat }, { memo: Buffer.from(memo, 'utf8').toString('hex'), amount: 0 }, { address: payer, amount: 99_990_000 }],
      }).txid)
      case 'mine': {
        // The block's WebSocket messages are written within mineBlock().
        const pushedAt = performance.now()
        node.mineBlock()
        return { height: node.height, pushedAt }
      }
      case 'callCount': return { count: node.calls.length }
      case 'takeCalls': {
        const byMethod: Record<string, number> = {}
        for (const call of node.calls) byMethod[call.method] = (byMethod[call.method] ?? 0) + 1
        node.clearCalls()
        return byMethod
      }
    }
  }
  const control = createServer((request, response) => {
    bodyOf(request).then(text => {
      const body = JSON.stringify(answer(JSON.parse(text) as Control))
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
      response.end(body)
    }).catch((err: Error) => {
      response.writeHead(500, { 'content-type': 'text/plain' })
      response.end(err.message)
    })
  })
  // Longer than any pause of the benchmark's, whose busy event loop may reuse a connection late.
  control.keepAliveTimeout = 600_000
  control.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: (control.address() as { port: number }).port })))
  process.once('SIGTERM', () => { node.close().finally(() => process.exit(0)) })
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN
const ms = (value: number): string => value < 10 ? value.toFixed(2) : value.toFixed(0)
const pct = (share: number): string => `${Math.round(share * 100)} %`

function quantiles (samples: number[]): { p50: number, p99: number, max: number } {
  const sorted = [...samples].sort((a, b) => a - b)
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? NaN }
}

/** Waits until `condition()` holds; the limit only turns a hang into an error naming `what`. */
async function until (what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = performance.now() + HANG_AFTER_MS
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`Still waiting after ${HANG_AFTER_MS} ms for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 2))
  }
}

async function main (): Promise<void> {
  const cleanups: Array<() => unknown> = []
  try {
    await measure(cleanups)
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup()
  }
}

async function measure (cleanups: Array<() => unknown>): Promise<void> {
  const startLoad = loadavg()[0]?.toFixed(2)
  const { child: emulator, port: controlPort } = await startChild(fileURLToPath(import.meta.url), ['--emulator'], {}, 'load')
  cleanups.push(() => stop(emulator))
  const control = async <T>(request: Control): Promise<T> => {
    const response = await fetch(`http://127.0.0.1:${controlPort}/`, { method: 'POST', body: JSON.stringify(request) })
    if (!response.ok) throw new Error(`emulator control ${request.op}: ${response.status} ${await response.text()}`)
    return await response.json() as T
  }
  // The service (this process) alone on the server CPU, all its threads.
  if (CPUS) execFileSync('taskset', ['-a', '-p', '-c', CPUS.server, String(process.pid)], { stdio: 'ignore' })

  // The emulator's clock on this one's: the offset seen by the fastest of a few round trips.
  let offset = 0
  let bestRoundTrip = Infinity
  for (let i = 0; i < 50; i++) {
    const sent = performance.now()
    const { now } = await control<{ now: number }>({ op: 'clock' })
    const back = performance.now()
    if (back - sent < bestRoundTrip) [bestRoundTrip, offset] = [back - sent, now - (sent + back) / 2]
  }
  const onOurClock = (emulatorTime: number): number => emulatorTime - offset

  const info = await control<EmulatorInfo>({ op: 'info' })
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-payments-'))
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    POCKETNET_NODES: info.url,
    PAYMENT_ADDRESS: info.receiver,
    PAYMENT_CONFIRMATIONS: String(CONFIRMATIONS),
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    EVENTS_INGEST: 'true',
  })
  const app = await buildApp(config)
  cleanups.push(() => app.close())
  await app.ready()
  const payments = app.payments
  if (payments === undefined) throw new Error('payments are off: PAYMENT_ADDRESS was not taken')

  // What the service reports, on this process's clock.
  let reportedHeight = 0
  app.events.subscribe(new Set(['blocks']), event => {
    if (event.type === 'block') reportedHeight = Math.max(reportedHeight, event.data.height as number)
  })
  const stateOf = new Map<string, string>()
  const confirmedAt = new Map<string, number>()
  const handledAt = new Map<string, number>()
  payments.on('confirmed', (event: { invoiceId: string }) => { if (!handledAt.has(event.invoiceId)) handledAt.set(event.invoiceId, performance.now()) })
  const watch = (invoice: InvoiceView): void => {
    app.events.subscribe(new Set([`payment:${invoice.id}`]), event => {
      const state = (event.data.invoice as { state: string }).state
      stateOf.set(invoice.id, state)
      if (state === 'confirmed' && !confirmedAt.has(invoice.id)) confirmedAt.set(invoice.id, performance.now())
    })
  }

  await until('the node WebSocket to be registered', async () => (await control<EmulatorInfo>({ op: 'info' })).registrations > 0)
  /** Mines a block; resolves once the service reported it, `ready()` holds, and it made no new call for QUIET_MS. */
  const mine = async (ready: () => boolean = () => true): Promise<{ pushedAt: number, height: number }> => {
    const mined = await control<{ height: number, pushedAt: number }>({ op: 'mine' })
    await until(`block ${mined.height} and its payments`, () => reportedHeight >= mined.height && ready())
    let last = -1
    let quietSince = performance.now()
    await until('the service to be done with the block', async () => {
      const { count } = await control<{ count: number }>({ op: 'callCount' })
      if (count !== last) [last, quietSince] = [count, performance.now()]
      return performance.now() - quietSince >= QUIET_MS
    })
    return { pushedAt: onOurClock(mined.pushedAt), height: mined.height }
  }
  await mine()

  // 1. createInvoice, with PENDING already in the store.
  const pending: InvoiceView[] = []
  const fillStarted = performance.now()
  for (let i = 0; i < PENDING; i++) pending.push(await payments.createInvoice({ amount: PRICE_SAT, metadata: { order: i } }))
  const fillS = (performance.now() - fillStarted) / 1000
  // Each creation's time, and the CPU time this process spent meanwhile (its own work, GC
  // included): a tail in the first but not in the second is time other processes held the CPU.
  const createSamples: number[] = []
  const createCpuSamples: number[] = []
  const cpuBefore = cpuSeconds().get(`cpu${CPUS?.server ?? ''}`)
  const ownBefore = cpuMicros(process.pid)
  for (let i = 0; i < CREATIONS; i++) {
    const cpu = process.cpuUsage()
    const started = performance.now()
    pending.push(await payments.createInvoice({ amount: PRICE_SAT, metadata: { order: PENDING + i } }))
    createSamples.push(performance.now() - started)
    const used = process.cpuUsage(cpu)
    createCpuSamples.push((used.user + used.system) / 1000)
  }
  const cpuAfter = cpuSeconds().get(`cpu${CPUS?.server ?? ''}`)
  const ownS = (cpuMicros(process.pid) - ownBefore) / 1e6
  const create = quantiles(createSamples)
  const createCpu = quantiles(createCpuSamples)
  /** How busy the service's CPU was during the timed creations, and how much of that was this process. */
  const serverCpu = cpuBefore && cpuAfter
    ? `CPU ${CPUS?.server} during the timed creations: busy ${pct((cpuAfter.busy - cpuBefore.busy) / (cpuAfter.total - cpuBefore.total))}, of which this process ${pct(ownS / (cpuAfter.busy - cpuBefore.busy))}; stolen by the hypervisor ${pct((cpuAfter.steal - cpuBefore.steal) / (cpuAfter.total - cpuBefore.total))}`
    : 'no CPU of its own (one CPU, or no taskset)'
  console.log(`createInvoice: ${PENDING} in ${fillS.toFixed(1)} s, then ${CREATIONS} timed: p50 ${ms(create.p50)} ms, p99 ${ms(create.p99)} ms, max ${ms(create.max)} ms; ${serverCpu}`)

  const unpaid = [...pending]
  /** Pays the next `count` unpaid invoices of `queue` (each with its own memo), to be mined in the next block. */
  const pay = async (count: number, queue: InvoiceView[] = unpaid): Promise<InvoiceView[]> => {
    const paid = queue.splice(0, count)
    for (const invoice of paid) watch(invoice)
    await control({ op: 'pay', memos: paid.map(invoice => invoice.memo), amountSat: PRICE_SAT })
    return paid
  }
  const allIn = (invoices: InvoiceView[], state: string): boolean => invoices.every(invoice => stateOf.get(invoice.id) === state)

  // 2. Node calls per block, every invoice created above still pending but those paid.
  interface BlockRow { paid: number, awaiting: number, calls: Record<string, number> }
  const blockRows: BlockRow[] = []
  const countBlock = async (paidNow: InvoiceView[], awaiting: InvoiceView[]): Promise<void> => {
    await control({ op: 'takeCalls' })
    await mine(() => allIn(paidNow, 'seen') && allIn(awaiting, 'confirmed'))
    blockRows.push({ paid: paidNow.length, awaiting: awaiting.length, calls: await control({ op: 'takeCalls' }) })
  }
  await countBlock([], [])
  const one = await pay(1)
  await countBlock(one, [])
  await countBlock([], one)
  const five = await pay(5)
  await countBlock(five, [])
  const fiveMore = await pay(5)
  await countBlock(fiveMore, five)
  await countBlock([], fiveMore)

  // 3. Confirmation latency: the push of the confirming block → the transition in the store, and → the app's handler.
  const latency = { twoStore: [] as number[], twoHandler: [] as number[], oneStore: [] as number[], oneHandler: [] as number[] }
  const record = (invoices: InvoiceView[], pushedAt: number, store: number[], handler: number[]): void => {
    for (const invoice of invoices) {
      store.push((confirmedAt.get(invoice.id) as number) - pushedAt)
      handler.push((handledAt.get(invoice.id) as number) - pushedAt)
    }
  }
  const handled = (invoices: InvoiceView[]): boolean => allIn(invoices, 'confirmed') && invoices.every(invoice => handledAt.has(invoice.id))
  for (let done = 0; done < LATENCY_PAYMENTS; done += PER_BLOCK) {
    const paid = await pay(Math.min(PER_BLOCK, LATENCY_PAYMENTS - done))
    await mine(() => allIn(paid, 'seen'))
    const { pushedAt } = await mine(() => handled(paid))
    record(paid, pushedAt, latency.twoStore, latency.twoHandler)
  }
  const oneConfirmation: InvoiceView[] = []
  for (let i = 0; i < LATENCY_PAYMENTS; i++) oneConfirmation.push(await payments.createInvoice({ amount: PRICE_SAT, confirmations: 1 }))
  for (let done = 0; done < LATENCY_PAYMENTS; done += PER_BLOCK) {
    const paid = await pay(Math.min(PER_BLOCK, LATENCY_PAYMENTS - done), oneConfirmation)
    const { pushedAt } = await mine(() => handled(paid))
    record(paid, pushedAt, latency.oneStore, latency.oneHandler)
  }

  // The table.
  const present = PENDING + CREATIONS
  const blockCalls = (row: BlockRow): number => Object.entries(row.calls).filter(([method]) => method !== 'getnodeinfo').reduce((sum, [, count]) => sum + count, 0)
  const bound = (row: BlockRow): number => 2 + row.paid + row.awaiting
  const callsMet = blockRows.every(row => blockCalls(row) <= bound(row))
  const describe = (calls: Record<string, number>): string => Object.entries(calls).sort(([a], [b]) => a.localeCompare(b)).map(([method, count]) => `${method} ${count}`).join(', ') || 'none'
  const two = { store: quantiles(latency.twoStore), handler: quantiles(latency.twoHandler) }
  const single = { store: quantiles(latency.oneStore), handler: quantiles(latency.oneHandler) }
  const verdict = (met: boolean): string => met ? '**met**' : '**missed**'
  const triple = (q: { p50: number, p99: number, max: number }): string => `${ms(q.p50)} / ${ms(q.p99)} / ${ms(q.max)} ms`
  const date = new Date().toISOString().slice(0, 10)
  const text = [
    `Written by \`npm run bench:payments\` (Node ${process.version}, ${date}): the service built in the benchmark's process (\`buildApp\`${CPUS ? `, on CPU ${CPUS.server}` : ''}) with payments on (\`PAYMENT_CONFIRMATIONS=${CONFIRMATIONS}\`), its embedded store (PGlite) in a temporary \`DATA_DIR\`, \`EVENTS_INGEST=true\`; the emulator in a process of its own${CPUS ? ` on CPU ${CPUS.load}` : ''}, its WebSocket followed by the service, paid and mined through its control server. ${present} invoices pending (${PENDING} created in ${fillS.toFixed(1)} s, then ${CREATIONS} timed) through every block below. Load average at the start ${startLoad}; ${serverCpu}.`,
    '',
    '| Measure | Value | Target (issue #26) | Verdict |',
    '|---|---|---|---|',
    `| \`createInvoice\` (\`app.payments\`), ${CREATIONS} one after another with ${PENDING} present: p50 / p99 / max | ${triple(create)} | p99 ≤ 2 ms | ${verdict(create.p99 <= 2)}${create.p99 > 2 && createCpu.p99 <= 2 ? '; the p99 of its CPU time is within it: the rest is time other processes held the CPU' : ''} |`,
    `| the same, this process's CPU time per creation: p50 / p99 / max | ${triple(createCpu)} | | |`,
    `| node calls per block, ${present} invoices pending, against 2 + the block's payments to the receiver + the payments awaiting confirmations (the blocks below) | ${blockRows.filter(row => blockCalls(row) <= bound(row)).length} of ${blockRows.length} blocks within it; most ${Math.max(...blockRows.map(blockCalls))} calls | bounded by the block's payments, not by the invoices | ${verdict(callsMet)} |`,
    `| confirmation latency, ${CONFIRMATIONS} confirmations (the next block confirms), push → store: p50 / p99 / max | ${triple(two.store)} | ≤ 1000 ms | ${verdict(two.store.p99 <= 1000)} |`,
    `| the same, push → the app's \`confirmed\` handler | ${triple(two.handler)} | | |`,
    `| confirmation latency, 1 confirmation (the paying block confirms), push → store: p50 / p99 / max | ${triple(single.store)} | ≤ 1000 ms | ${verdict(single.store.p99 <= 1000)} |`,
    `| the same, push → the app's \`confirmed\` handler | ${triple(single.handler)} | | |`,
    '',
    `Node calls per block (the emulator's calls from one block to the next, once the service made none for ${QUIET_MS} ms; \`getnodeinfo\` is the pool's health probe, on its own timer, not counted against the bound):`,
    '',
    '| Block | payments to the receiver in it | payments awaiting their last confirmation | node calls, by method | calls (without `getnodeinfo`) | bound |',
    '|---|---|---|---|---|---|',
    ...blockRows.map((row, index) => `| ${index + 1} | ${row.paid} | ${row.awaiting} | ${describe(row.calls)} | ${blockCalls(row)} | ${bound(row)} |`),
    '',
    `Latency: ${LATENCY_PAYMENTS} payments for each kind of invoice (below 100 samples, the p99 is the slowest), ${PER_BLOCK} to a block, from the moment the emulator writes the confirming block's WebSocket messages to the \`payment:<id>\` event the service announces once the \`confirmed\` transition is committed ("store"), and to the app's \`app.payments.on('confirmed')\` handler, which the outbox feeds ("handler"). The emulator's clock is read on this process's through the fastest of 50 round trips (${bestRoundTrip.toFixed(2)} ms).`,
  ].join('\n')
  console.log(`\n${text}\n`)
  writeResultsSection('payments', '### Payments (issue #26)\n\nCommand: `npm run bench:payments`.', text)
}

if (process.argv[2] === '--emulator') await emulatorProcess()
else {
  await main()
  process.exit(0)
}
