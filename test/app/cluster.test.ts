import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { get } from 'node:http'
import { describe, it } from 'node:test'
import { RestartPolicy } from '../../src/cluster/restart-policy.js'
import { SignalCount } from '../../src/signal-count.js'
import { manualClock } from '../helpers/manual-clock.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { startService, type LogLine, type ServiceProcess } from '../helpers/start-service.js'
import { waitFor } from '../helpers/wait-for.js'

/** A GET over a connection of its own (no agent: `Connection: close`), so the cluster hands each to the next worker. */
function fetchAlone (url: string, requestId: string): Promise<{ status: number, body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers: { 'x-request-id': requestId } }, response => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => { body += chunk })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
      response.on('error', reject)
    }).on('error', reject)
  })
}

/** Turns a hang into a failure; no bound on how fast anything must be. */
const HANG_GUARD = { timeout: 60_000 }

const isPrimary = (line: LogLine): boolean => line.name === 'primary'

/** Waits for `count` more workers to listen than `known` holds; returns their pids and the shared port. */
async function workersListening (service: ServiceProcess, count: number, known: number[] = []): Promise<{ pids: number[], port: number }> {
  const pids: number[] = []
  let port = 0
  while (pids.length < count) {
    const line = await service.line('a worker listening', candidate => isPrimary(candidate) && candidate.msg === 'worker listening' &&
      !pids.includes(candidate.workerPid as number) && !known.includes(candidate.workerPid as number))
    pids.push(line.workerPid as number)
    port = line.port as number
  }
  return { pids, port }
}

/** The pid of the process that logged the access line of the request `requestId` (LOG_LEVEL=debug logs successes). */
async function servedBy (service: ServiceProcess, requestId: string): Promise<number> {
  const line = await service.line(`the access log line of ${requestId}`, candidate => candidate.reqId === requestId && candidate.msg === 'request completed')
  return line.pid
}

/** Asks `path` over fresh connections until the worker `pid` answers; returns how many were asked, and its answer. */
async function askUntilServedBy (service: ServiceProcess, url: string, pid: number, label: string, path = '/healthz'): Promise<{ asked: number, body: string }> {
  // Round-robin reaches every worker within a few connections; the bound only turns a miss into a failure.
  for (let i = 1; i <= 50; i++) {
    const id = `${label}-${i}`
    const answer = await fetchAlone(`${url}${path}`, id)
    assert.equal(answer.status, 200, answer.body)
    if (await servedBy(service, id) === pid) return { asked: i, body: answer.body }
  }
  assert.fail(`worker ${pid} answered none of 50 requests`)
}

/** The value of the one sample `series` (name and labels, as written) in a Prometheus text answer. */
function sample (text: string, series: string): number {
  const values = text.split('\n').filter(line => line.startsWith(`${series} `)).map(line => Number(line.slice(series.length + 1)))
  assert.equal(values.length, 1, `one sample of ${series} in:\n${text}`)
  return values[0] as number
}

function isAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false
    throw err
  }
}

describe('RestartPolicy', () => {
  it('waits twice as long after each death within the window, and gives up at the fifth', () => {
    const clock = manualClock()
    const policy = new RestartPolicy({ now: clock.now })
    const delays = []
    for (let i = 0; i < 4; i++) {
      delays.push(policy.crashed())
      clock.advance(1000)
    }
    assert.deepEqual(delays, [100, 200, 400, 800])
    assert.equal(policy.crashed(), undefined)
    assert.equal(policy.recentCrashes, 5)
  })

  it('forgets deaths older than the window', () => {
    const clock = manualClock()
    const policy = new RestartPolicy({ now: clock.now, windowMs: 30_000 })
    for (let i = 0; i < 4; i++) policy.crashed()
    clock.advance(29_999)
    assert.equal(policy.crashed(), undefined, 'five deaths within the window')

    const fresh = new RestartPolicy({ now: clock.now, windowMs: 30_000 })
    for (let i = 0; i < 4; i++) fresh.crashed()
    clock.advance(30_000)
    assert.equal(fresh.crashed(), 100, 'the first death of a new window')
    assert.equal(fresh.recentCrashes, 1)
  })

  it('caps the wait at maxDelayMs', () => {
    const policy = new RestartPolicy({ now: manualClock().now, maxCrashes: 20, firstDelayMs: 100, maxDelayMs: 1000 })
    const delays = Array.from({ length: 6 }, () => policy.crashed())
    assert.deepEqual(delays, [100, 200, 400, 800, 1000, 1000])
  })
})

describe('SignalCount', () => {
  it('takes the first signal repeated within sameWithinMs for the same one, passed on by npm or tsx', () => {
    const clock = manualClock()
    const signals = new SignalCount({ now: clock.now, sameWithinMs: 500 })
    assert.equal(signals.record('SIGINT'), 'first')
    clock.advance(499)
    assert.equal(signals.record('SIGINT'), 'again')
    clock.advance(1)
    assert.equal(signals.record('SIGINT'), 'second')
  })

  it('takes another signal for a second one at once', () => {
    const signals = new SignalCount({ now: manualClock().now })
    assert.equal(signals.record('SIGINT'), 'first')
    assert.equal(signals.record('SIGTERM'), 'second')
  })
})

describe('WEB_CONCURRENCY: worker processes on one port', () => {
  it('runs two workers, with the node flags of the primary, that both answer; one killed with SIGKILL is replaced while the primary stays up', HANG_GUARD, async (t) => {
    const node = await startEmulator(t)
    const service = startService(t, { WEB_CONCURRENCY: '2', POCKETNET_NODES: node.url, LOG_LEVEL: 'debug' })
    const { pids, port } = await workersListening(service, 2)
    const [killed, kept] = pids as [number, number]
    assert.ok(!pids.includes(service.child.pid as number), 'the workers are processes of their own')
    if (existsSync('/proc/self/cmdline')) {
      for (const pid of pids) {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
        for (const flag of ['--retain-maps-for-n-gc=1000', '--wasm-tiering-budget=20000']) assert.ok(args.includes(flag), `worker ${pid} runs with the start script's V8 flag ${flag}`)
      }
    }
    const url = `http://127.0.0.1:${port}`
    for (const pid of pids) await askUntilServedBy(service, url, pid, `to-${pid}`)

    process.kill(killed, 'SIGKILL')
    const died = await service.line('the death of the killed worker', line => isPrimary(line) && line.msg === 'worker died: starting another')
    assert.equal(died.workerPid, killed)
    assert.equal(died.signal, 'SIGKILL')
    const { pids: [replacement] } = await workersListening(service, 1, pids)
    assert.equal(service.child.exitCode, null, 'the primary is still up')
    await askUntilServedBy(service, url, replacement as number, 'after-kill')
    await askUntilServedBy(service, url, kept, 'kept')

    service.child.kill('SIGTERM')
    assert.deepEqual(await service.exited, { code: 0, signal: null })
  })

  it('answers /metrics with every worker\'s requests summed, whichever worker takes the scrape', HANG_GUARD, async (t) => {
    const node = await startEmulator(t)
    const service = startService(t, { WEB_CONCURRENCY: '2', POCKETNET_NODES: node.url, LOG_LEVEL: 'debug' })
    const { pids, port } = await workersListening(service, 2)
    const url = `http://127.0.0.1:${port}`
    // Both workers serve /healthz (at least once each) and /readyz, which makes each one's client probe the node.
    let healthz = 0
    let readyz = 0
    for (const pid of pids) {
      healthz += (await askUntilServedBy(service, url, pid, `healthz-${pid}`)).asked
      const ready = await askUntilServedBy(service, url, pid, `readyz-${pid}`, '/readyz')
      readyz += ready.asked
      const { data } = JSON.parse(ready.body) as { data: { usableNodes: number, bestHeight: number } }
      assert.deepEqual([data.usableNodes, data.bestHeight], [1, node.height], `worker ${pid} is ready`)
    }
    const perWorker = pids.map(pid => service.lines.filter(line => line.pid === pid && line.msg === 'request completed' && line.route === '/healthz').length)
    assert.ok(perWorker.every(count => count > 0 && count < healthz), `requests per worker: ${perWorker.join(', ')} of ${healthz}`)

    // Scrapes over fresh connections until each worker has answered one: every answer holds both workers' counts.
    const scrapers = new Set<number>()
    for (let i = 1; scrapers.size < pids.length; i++) {
      assert.ok(i <= 50, `both workers answered a scrape within 50; answered by: ${[...scrapers].join(', ')}`)
      const id = `scrape-${i}`
      const scrape = await fetchAlone(`${url}/metrics`, id)
      assert.equal(scrape.status, 200)
      assert.doesNotMatch(scrape.body, /^# Only this worker's metrics/m)
      assert.equal(sample(scrape.body, 'http_requests_total{route="/healthz",method="GET",status="200"}'), healthz, `scrape ${id}`)
      assert.equal(sample(scrape.body, 'http_request_duration_seconds_count{route="/healthz"}'), healthz, `scrape ${id}`)
      assert.equal(sample(scrape.body, 'http_requests_total{route="/readyz",method="GET",status="200"}'), readyz)
      // Gauges every worker reads from the same node: their maximum, never their sum.
      assert.equal(sample(scrape.body, 'pocketnet_nodes_usable'), 1)
      assert.equal(sample(scrape.body, 'pocketnet_best_height'), node.height)
      scrapers.add(await servedBy(service, id))
    }

    service.child.kill('SIGTERM')
    assert.deepEqual(await service.exited, { code: 0, signal: null })
  })

  it('answers /metrics with its own worker\'s metrics, marked so, when another worker does not answer in time', HANG_GUARD, async (t) => {
    const node = await startEmulator(t)
    const service = startService(t, { WEB_CONCURRENCY: '2', POCKETNET_NODES: node.url, LOG_LEVEL: 'debug' })
    const { pids, port } = await workersListening(service, 2)
    const [live, stopped] = pids as [number, number]
    const url = `http://127.0.0.1:${port}`
    let healthz = 0
    for (const pid of pids) healthz += (await askUntilServedBy(service, url, pid, `healthz-${pid}`)).asked
    const ownCount = service.lines.filter(line => line.pid === live && line.msg === 'request completed' && line.route === '/healthz').length

    // A stopped process answers nothing, neither the primary's collection nor the one connection handed to it.
    process.kill(stopped, 'SIGSTOP')
    t.after(() => { if (isAlive(stopped)) process.kill(stopped, 'SIGCONT') })
    const scrapes = ['stopped-1', 'stopped-2'].map(id => fetchAlone(`${url}/metrics`, id).then(answer => ({ id, ...answer })))
    const first = await Promise.race(scrapes)
    assert.equal(await servedBy(service, first.id), live)
    assert.equal(first.status, 200)
    assert.match(first.body, new RegExp(`^# Only this worker's metrics \\(pid ${live}\\): the cluster's did not come within 2000 ms\n`))
    assert.equal(sample(first.body, 'http_requests_total{route="/healthz",method="GET",status="200"}'), ownCount)

    process.kill(stopped, 'SIGCONT')
    for (const answer of await Promise.all(scrapes)) assert.equal(answer.status, 200)
    const again = await fetchAlone(`${url}/metrics`, 'resumed')
    assert.doesNotMatch(again.body, /^# Only this worker's metrics/m)
    assert.equal(sample(again.body, 'http_requests_total{route="/healthz",method="GET",status="200"}'), healthz)

    service.child.kill('SIGTERM')
    assert.deepEqual(await service.exited, { code: 0, signal: null })
  })

  const stops = [
    { how: 'SIGTERM to the primary', group: false, stop: (service: ServiceProcess) => service.child.kill('SIGTERM') },
    // The terminal signals the whole foreground process group: the workers get SIGINT as well as the primary's request.
    { how: 'Ctrl+C (SIGINT to the process group)', group: true, stop: (service: ServiceProcess) => process.kill(-(service.child.pid as number), 'SIGINT') },
  ]
  for (const { how, group, stop } of stops) {
    it(`on ${how}, answers every request in flight, then every worker and the primary exit 0`, HANG_GUARD, async (t) => {
      const node = await startEmulator(t, { latencyMs: 300 })
      const service = startService(t, { WEB_CONCURRENCY: '2', POCKETNET_NODES: node.url, CACHE_TTL_SEARCH_MS: '0', LOG_LEVEL: 'debug' }, { group })
      const { pids, port } = await workersListening(service, 2)
      const url = `http://127.0.0.1:${port}`
      node.clearCalls()
      const ids = Array.from({ length: 20 }, (_, i) => `search-${i}`)
      const requests = ids.map((id, i) => fetchAlone(`${url}/api/search?keyword=bitcoin&page=${i}&pageSize=5`, id))
      // Signal once every request has reached the node: they are all in flight.
      await waitFor('20 searches at the node', () => node.callsTo('search').length >= 20)
      stop(service)

      const answers = await Promise.all(requests)
      assert.deepEqual(answers.map(answer => answer.status), Array(20).fill(200))
      assert.ok(answers.every(answer => (JSON.parse(answer.body) as { data: { results: unknown[] } }).data.results.length === 5))
      // `exited` waits for every holder of the stdout, the workers included.
      assert.deepEqual(await service.exited, { code: 0, signal: null })
      const servers = new Set(await Promise.all(ids.map(id => servedBy(service, id))))
      assert.deepEqual([...servers].sort(), [...pids].sort(), 'both workers had requests in flight')
      for (const pid of pids) {
        assert.ok(service.lines.some(line => line.pid === pid && line.msg === 'shut down'), `worker ${pid} shut down gracefully`)
        assert.ok(service.lines.some(line => isPrimary(line) && line.msg === 'worker exited' && line.workerPid === pid && line.code === 0), `worker ${pid} exited 0`)
        assert.equal(isAlive(pid), false, `worker ${pid} is gone`)
      }
    })
  }

  it('on a second signal (Ctrl+C, then SIGTERM), kills the workers and exits 130', HANG_GUARD, async (t) => {
    const node = await startEmulator(t)
    node.setFault({ kind: 'hang' }, { method: 'search' })
    const service = startService(t, { WEB_CONCURRENCY: '2', POCKETNET_NODES: node.url, SHUTDOWN_TIMEOUT_MS: '60000', RPC_TIMEOUT_MS: '60000', RPC_DEADLINE_MS: '60000' }, { group: true })
    const { pids, port } = await workersListening(service, 2)
    const hanging = fetchAlone(`http://127.0.0.1:${port}/api/search?keyword=x`, 'hanging').catch(() => 'dropped')
    await waitFor('the search at the node', () => node.callsTo('search').length >= 1)
    const group = -(service.child.pid as number)
    process.kill(group, 'SIGINT')
    // Two signals sent at once would merge into one: send the second once the first is handled everywhere.
    await service.line('the primary shutting down', line => isPrimary(line) && line.msg.startsWith('shutting down'))
    for (const pid of pids) await service.line(`worker ${pid} shutting down`, line => line.pid === pid && line.msg.startsWith('shutting down'))
    // Another SIGINT this soon would be the same Ctrl+C passed on by npm or tsx (src/signal-count.ts).
    service.child.kill('SIGTERM')

    assert.deepEqual(await service.exited, { code: 130, signal: null })
    assert.equal(await hanging, 'dropped')
    assert.ok(service.lines.some(line => isPrimary(line) && line.msg === 'second signal: killing the workers, exiting now'))
    // The idle worker may have closed already; the one holding the search cannot have.
    assert.ok(service.lines.filter(line => !isPrimary(line) && line.msg === 'shut down').length <= 1, 'the worker holding the hanging search was killed')
  })

  it('exits 1 on a bad variable with the one line naming it, before forking anything', HANG_GUARD, async (t) => {
    const cases = [['PORT', { PORT: 'abc', WEB_CONCURRENCY: '2' }], ['WEB_CONCURRENCY', { WEB_CONCURRENCY: '0' }]] as const
    await Promise.all(cases.map(async ([variable, env]) => {
      const service = startService(t, env)
      assert.deepEqual(await service.exited, { code: 1, signal: null })
      // A forked worker would log, or print the same message once more.
      assert.deepEqual(service.lines, [])
      const [heading, ...problems] = service.stderr().trimEnd().split('\n')
      assert.equal(heading, 'Invalid configuration:')
      assert.equal(problems.length, 1, service.stderr())
      assert.match(problems[0] as string, new RegExp(`^- ${variable} must be `))
    }))
  })

  it('gives up and exits 1 when the workers keep dying right after start', HANG_GUARD, async (t) => {
    const service = startService(t, { WEB_CONCURRENCY: '2', POCKETNET_NODES: 'http://127.0.0.1:9' })
    // A deploy whose workers cannot live: each dies as soon as it is forked.
    const killed: number[] = []
    try {
      for (;;) {
        const forked = await service.line('a worker forked', line => isPrimary(line) && line.msg === 'worker forked' && !killed.includes(line.workerPid as number))
        killed.push(forked.workerPid as number)
        process.kill(forked.workerPid as number, 'SIGKILL')
      }
    } catch (err) {
      assert.match((err as Error).message, /the service ended before logging a worker forked/)
    }
    assert.deepEqual(await service.exited, { code: 1, signal: null })
    const primary = service.lines.filter(isPrimary)
    assert.deepEqual(primary.filter(line => line.msg === 'worker died: starting another').map(line => line.restartInMs), [100, 200, 400, 800])
    const fatal = primary.filter(line => line.level === 60)
    assert.deepEqual(fatal.map(line => line.msg), ['workers keep dying (5 within 30000 ms): giving up'])
    assert.equal(primary.at(-1)?.msg, 'shut down')
    assert.equal(primary.at(-1)?.exitCode, 1)
  })
})
