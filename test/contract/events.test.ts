/**
 * pocketnet-client's node event source against the real node: its WebSocket (found from the port
 * the node reports), a block staked live announced on it, and a block disconnected
 * (`invalidateblock`) then replaced, reported as a re-org. Real timers: the node makes the events;
 * the waits only wait for them, they bound nothing. The node announces a block only above the
 * height a socket was last told of, so a block that replaces the tip at the same height is not
 * announced: the node's getnodeinfo (the pool's probes) shows it, or the next block does.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { PocketNetProxyApi, createNodeEventSource, type BlockEvent, type ChainEvent, type ClientOptions, type NodeEventError } from '../../packages/pocketnet-client/index.js'
import { waitFor } from '../helpers/wait-for.js'
import { bestBlock, contractNode, privateRpc, publicRpc, stakeBlock } from './contract-node.js'

type WithAfter = { after (fn: () => unknown): void }

async function follow (t: WithAfter, client: ClientOptions = {}) {
  const api = await PocketNetProxyApi.create({ nodes: [contractNode.url], network: 'regtest', hedging: false, ...client })
  t.after(() => api.close())
  const events: ChainEvent[] = []
  const errors: NodeEventError[] = []
  const source = createNodeEventSource({ api, onEvent: event => events.push(event), onError: err => errors.push(err) })
  t.after(() => source.close())
  await waitFor('the socket to register with the node', () => source.stats().socket === 'open' && !source.stats().catchingUp, 60_000)
  return { api, events, errors, source }
}

const blocks = (events: ChainEvent[]): BlockEvent[] => events.filter((event): event is BlockEvent => event.kind === 'block')

describe('the node event source on a real node', () => {
  it('reports the tip, then a block staked live, with the node\'s own hash, over the node\'s WebSocket', async (t) => {
    const { events, errors, source } = await follow(t)
    const tip = (await publicRpc('getnodeinfo')).result.lastblock
    assert.deepEqual(blocks(events).at(-1), { kind: 'block', height: tip.height, blockHash: tip.hash, time: tip.time })
    const opened = source.stats().socketsOpened
    const height = await stakeBlock()
    await waitFor(`block ${height} to be reported`, () => blocks(events).some(event => event.height === height), 60_000)
    const [staked] = (await publicRpc('getlastblocks', [1, height])).result as Array<{ hash: string }>
    assert.equal(blocks(events).find(event => event.height === height)?.blockHash, staked?.hash)
    assert.equal(source.stats().socketsOpened, opened, 'announced on the socket it holds')
    assert.deepEqual(errors, [])
  })

  it('reports a re-org when the tip block is disconnected and another takes its height', async (t) => {
    const { events, errors } = await follow(t)
    const height = await stakeBlock()
    await waitFor(`block ${height} to be reported`, () => blocks(events).some(event => event.height === height), 60_000)
    const old = blocks(events).find(event => event.height === height) as BlockEvent
    // The node sends nothing for a disconnect: the next block shows that the chain changed.
    await privateRpc('invalidateblock', [old.blockHash])
    assert.equal(await stakeBlock(), height)
    // The node announces a block only above the height its socket was last told of: the block
    // that took the same height goes unannounced, and the next one shows the change.
    const next = await stakeBlock()
    await waitFor('the re-org to be reported', () => events.some(event => event.kind === 'reorg'), 60_000)
    const reorg = events.find(event => event.kind === 'reorg')
    assert.deepEqual(reorg && { ...reorg, newBlockHash: undefined }, { kind: 'reorg', height, oldBlockHash: old.blockHash, newBlockHash: undefined })
    await waitFor('the new blocks to be reported', () => blocks(events).some(event => event.height === next), 60_000)
    const after = blocks(events.slice(events.indexOf(reorg as ChainEvent) + 1))
    assert.deepEqual(after.map(event => event.height), [height, next], 'the block that replaced it, then the next, each once')
    assert.notEqual(after[0]?.blockHash, old.blockHash)
    assert.deepEqual(errors.map(err => err.code), ['EVENTS_ERR_OFF_CHAIN'], 'the re-org, said once')
  })

  it('reports a re-org that leaves the height unchanged as soon as the node\'s getnodeinfo shows it, with no block announced', async (t) => {
    // No probe but the start's: the getnodeinfo below is the one that shows the change, as the
    // pool's next probe would.
    const { api, events, errors, source } = await follow(t, { probeIntervalMs: 3_600_000 })
    const height = await stakeBlock()
    await waitFor(`block ${height} to be reported`, () => blocks(events).some(event => event.height === height), 60_000)
    const old = blocks(events).find(event => event.height === height) as BlockEvent
    await privateRpc('invalidateblock', [old.blockHash])
    assert.equal(await stakeBlock(), height)
    const replaced = await bestBlock()

    const info = await api.rpc.getnodeinfo({ fresh: true })
    assert.deepEqual([info.lastblock.height, info.lastblock.hash], [height, replaced.hash])
    await waitFor('the re-org to be reported', () => events.some(event => event.kind === 'reorg'), 60_000)
    const reorg = events.find(event => event.kind === 'reorg')
    assert.deepEqual(reorg, { kind: 'reorg', height, oldBlockHash: old.blockHash, newBlockHash: replaced.hash })
    await waitFor('the block that replaced it', () => blocks(events).some(event => event.blockHash === replaced.hash), 60_000)
    assert.deepEqual(blocks(events.slice(events.indexOf(reorg as ChainEvent) + 1)).map(event => [event.height, event.blockHash]), [[height, replaced.hash]])
    assert.deepEqual(await bestBlock(), replaced, 'no block above it was needed')
    assert.deepEqual(source.stats().reorgsFound, { resume: 0, 'node-report': 1, 'new-blocks': 0 })
    assert.match(errors.find(err => err.code === 'EVENTS_ERR_OFF_CHAIN')?.message ?? '', new RegExp(`^A node reports another tip than the chain reported: block ${height} is ${replaced.hash} on the node's chain, not ${old.blockHash}\\.`))
  })
})
