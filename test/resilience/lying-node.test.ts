/**
 * A node that lies about its chain height (issue #24): it must take no traffic by it, and the
 * pool's view of the chain must follow the nodes answering now, not a height once reported.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { PocketNetProxyApi } from '../../packages/pocketnet-client/index.js'
import { NO_CACHE, startApp } from '../helpers/build-app.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

interface Readiness { data: { bestHeight: number, usableNodes: number, nodes: Array<{ chain: string, lastErrorCode?: string }> } }

/** Asks again until the answer satisfies `done`; the bound only turns a hang into a failure. */
async function until<T> (what: string, ask: () => Promise<T>, done: (answer: T) => boolean): Promise<T> {
  const hangAt = performance.now() + 30_000
  for (;;) {
    const answer = await ask()
    if (done(answer)) return answer
    if (performance.now() > hangAt) throw new Error(`Still waiting for ${what}`)
    await delay(10)
  }
}

const HONEST_HEIGHT = 2_500_000
const LIE = 1_000_000

async function createClient (t: { after (fn: () => unknown): void }, nodes: string[], probeIntervalMs = 60_000) {
  const api = await PocketNetProxyApi.create({ nodes, probeIntervalMs, cache: { ttlMs: { getnodeinfo: 0, getuserprofile: 0, search: 0 } } })
  t.after(() => api.close())
  await waitFor('every node to report its height', () => api.nodes().every(node => node.height !== undefined))
  return api
}

describe('a node that lies about its chain height', () => {
  it('takes no call among honest nodes, and moves the pool\'s tip not at all', async (t) => {
    const honest = [await startEmulator(t, { height: HONEST_HEIGHT }), await startEmulator(t, { height: HONEST_HEIGHT })]
    const liar = await startEmulator(t, { height: HONEST_HEIGHT + LIE })
    const api = await createClient(t, [honest[0]!.url, liar.url, honest[1]!.url])
    liar.clearCalls()

    for (let i = 0; i < 30; i++) await api.rpc.search({ keyword: 'bitcoin', type: 'content', pageSize: 3 })

    assert.ok(liar.callsTo('search').length <= 1, `the liar took ${liar.callsTo('search').length} of 30 calls`)
    assert.equal(honest[0]!.callsTo('search').length + honest[1]!.callsTo('search').length + liar.callsTo('search').length, 30)
    assert.equal(api.bestHeight, HONEST_HEIGHT)
    const state = api.nodes()[1]!
    assert.deepEqual([state.chain, state.usable, state.height], ['ahead', false, HONEST_HEIGHT + LIE])
  })

  it('forgets a height once the node that said it is gone: the honest node is usable again', async (t) => {
    const honest = await startEmulator(t, { height: HONEST_HEIGHT })
    const liar = await startEmulator(t, { height: HONEST_HEIGHT + LIE })
    const api = await createClient(t, [honest.url, liar.url], 50)
    // Two nodes that disagree: nothing tells which one lies, so neither is set aside.
    assert.deepEqual(api.nodes().map(node => node.chain), ['in-step', 'in-step'])
    await liar.stop()
    await waitFor('the liar\'s circuit to open', () => api.nodes()[1]!.circuit !== 'closed')
    assert.equal(api.bestHeight, HONEST_HEIGHT)
    assert.deepEqual([api.nodes()[0]!.usable, api.nodes()[0]!.chain], [true, 'in-step'])
  })
})

describe('GET /readyz follows the nodes answering now', () => {
  it('stays ready when the only node restarts at a lower height', async (t) => {
    const node = await startEmulator(t, { height: HONEST_HEIGHT })
    const { get } = await startApp(t, { nodes: [node.url], env: { ...NO_CACHE, POCKETNET_PROBE_INTERVAL_MS: '50' } })
    assert.equal((await get('/readyz')).status, 200)
    // It comes back 100 blocks lower (a restored snapshot): its latest word is the tip now.
    node.setFault({ kind: 'lag', blocks: 100 }, { method: 'getnodeinfo' })
    const lower = HONEST_HEIGHT - 100
    const response = await until('a probe to see the lower height', () => get('/readyz'),
      ({ body }) => (body as Readiness).data?.bestHeight === lower)
    assert.equal(response.status, 200)
    assert.equal((response.body as Readiness).data.usableNodes, 1)
  })

  it('is ready once honest nodes answer, after a liar that alone set the tip went away', async (t) => {
    const liar = await startEmulator(t, { height: HONEST_HEIGHT + LIE })
    const honest = await startEmulator(t, { height: HONEST_HEIGHT })
    // The honest node does not answer at start: the liar alone sets the tip.
    honest.setFault({ kind: 'hang' }, { method: 'getnodeinfo', times: 1 })
    const { get } = await startApp(t, { nodes: [liar.url, honest.url], env: { ...NO_CACHE, POCKETNET_PROBE_INTERVAL_MS: '50', RPC_TIMEOUT_MS: '200', RPC_DEADLINE_MS: '400' } })
    await liar.stop()
    const response = await until('readiness to return', () => get('/readyz'), ({ status }) => status === 200)
    const { data } = response.body as Readiness
    assert.equal(data.bestHeight, HONEST_HEIGHT)
    assert.equal(data.nodes[1]!.chain, 'in-step')
    assert.match(data.nodes[0]!.lastErrorCode ?? '', /^RPC_ERR_[A-Z]+$/, 'a state, not the node\'s words')
  })
})
