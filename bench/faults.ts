/**
 * `npm run bench:faults`: a fixed load on the service in front of three emulator nodes, with
 * one fault on node 2 at a time (issue #3). The answer cache is off, so every request reaches
 * a node. For each fault: success rate, p50/p99, and the requests node 2 still received after
 * the first second (by then the pool should have found it out).
 * Writes bench/faults-results.md.
 */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createEmulator, type Emulator, type Fault } from '../devnode/server.js'
import { CONNECTIONS, load, startService, stop } from './harness.js'

const DURATION_S = Number(process.env.BENCH_FAULT_DURATION_S ?? 20)
const UPSTREAM_LATENCY_MS = 20
const DETECTION_MS = 1000

const FAULTS: Array<[string, Fault | 'down' | null]> = [
  ['none (healthy)', null],
  ['connection refused', 'down'],
  ['dropped connection', { kind: 'drop' }],
  ['hang', { kind: 'hang' }],
  ['HTTP 500 RPC error', { kind: 'rpc-error', code: -32603, message: 'Internal error' }],
  ['Work queue depth exceeded', { kind: 'work-queue' }],
  ['HTML 502', { kind: 'html', status: 502 }],
  ['non-JSON 200', { kind: 'garbage' }],
  ['2 s latency', { kind: 'latency', ms: 2000 }],
  ['lagging height (10 blocks)', { kind: 'lag', blocks: 10 }],
]

function trafficTo (node: Emulator): number {
  return node.callsTo('getuserprofile').length + node.callsTo('search').length + node.callsTo('getnodeinfo').length
}

execFileSync('npm', ['run', 'build'], { stdio: 'inherit' })
const nodes = await Promise.all([0, 1, 2].map(() => createEmulator({ latencyMs: UPSTREAM_LATENCY_MS })))
const faulty = nodes[1] as Emulator
const users = (nodes[0] as Emulator).dataset.users.slice(0, 200).map(user => user.address)
const keywords = ['bitcoin', 'music', 'travel', 'caf%C3%A9', 'pocketnet', 'freedom', 'recipe', 'photo']

const rows: string[] = []
let healthyP99 = 0
try {
  for (const [name, fault] of FAULTS) {
    if (fault === 'down') await faulty.stop()
    else faulty.setFault(fault)
    const service = await startService({
      POCKETNET_NODES: nodes.map(node => node.url).join(','),
      LOG_LEVEL: 'error',
      CACHE_TTL_NODEINFO_MS: '0',
      CACHE_TTL_PROFILE_MS: '0',
      CACHE_TTL_SEARCH_MS: '0',
      RATE_LIMIT_MAX: '1000000000',
      // The emulators here serve any number at once: a fixed limit of 16 per node, as before issue #16.
      POCKETNET_NODE_THREADS: '16',
    })
    let n = 0
    const paths = (): string => {
      n++
      const pick = n % 3
      if (pick === 0) return '/api/nodeinfo'
      if (pick === 1) return `/api/user/${users[n % users.length]}`
      return `/api/search?keyword=${keywords[n % keywords.length]}&page=${n % 3}&pageSize=10`
    }
    let afterDetection = 0
    const detection = setTimeout(() => { afterDetection = trafficTo(faulty) }, DETECTION_MS)
    const measured = await load(name, `http://127.0.0.1:${service.port}`, DURATION_S, { path: paths })
    clearTimeout(detection)
    const lateTraffic = trafficTo(faulty) - afterDetection
    await stop(service.child)
    if (fault === 'down') await faulty.start()
    faulty.setFault(null)
    for (const node of nodes) node.clearCalls()
    if (fault === null) healthyP99 = measured.p99
    const success = ((measured.total - measured.errors) / measured.total) * 100
    rows.push(`| ${name} | ${measured.total} | ${success.toFixed(2)} % | ${measured.p50} | ${measured.p99} | ${healthyP99 ? (measured.p99 / healthyP99).toFixed(2) : ''} | ${fault === null ? '' : lateTraffic} |`)
    console.log(rows[rows.length - 1])
  }
} finally {
  await Promise.all(nodes.map(node => node.close()))
}

const report = `# Fault benchmark results

Node ${process.version}, ${new Date().toISOString().slice(0, 10)}, ${CONNECTIONS} connections, ${DURATION_S} s per fault, three emulator nodes with ${UPSTREAM_LATENCY_MS} ms latency, the fault on node 2, answer cache off, requests spread over the three routes. Command: \`npm run bench:faults\`.

"Node 2 after 1 s" counts the RPC calls node 2 received after the first second of load (health probes included).

| Fault on node 2 | requests | success | p50 ms | p99 ms | p99 / healthy p99 | node 2 after 1 s |
|---|---|---|---|---|---|---|
${rows.join('\n')}
`
writeFileSync(new URL('./faults-results.md', import.meta.url), report)
console.log(report)
