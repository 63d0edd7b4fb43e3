/**
 * The live event stream (issue #27) on the real node: the service, with the node as its only
 * node, follows the node's own WebSocket (at the port its getnodeinfo reports) and a client reads
 * the Server-Sent Events. Blocks staked live, a payment from the node's wallet, a re-org made with
 * invalidateblock, and a client that reconnects with Last-Event-ID. Real timers: the node makes
 * the events; the waits only wait for them, they bound nothing.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openStream, type SseFrame } from '../events/sse-client.js'
import { startApp, type TestApp } from '../helpers/build-app.js'
import { waitFor } from '../helpers/wait-for.js'
import { bestBlock, contractNode, holdOutOfBlocks, payFromWallet, privateRpc, publicRpc, stakeBlock, walletAddress } from './contract-node.js'

type WithAfter = { after (fn: () => unknown): void }

/** Long enough for a busy machine; a real node answers in far less. */
const PATIENCE_MS = 60_000

/** The service following the node's chain: its event source has reported the node's tip. */
async function service (t: WithAfter): Promise<TestApp> {
  const app = await startApp(t, { nodes: [contractNode.url], env: { POCKETNET_NETWORK: 'regtest', EVENTS_INGEST: 'true' } })
  const { height } = await bestBlock()
  const epoch = app.app.events.lastId.split('-')[0] as string
  await waitFor('the service to report the node\'s tip', () => {
    const reported = app.app.events.since(`${epoch}-0`, new Set(['blocks']))
    return reported !== 'gap' && reported.some(event => event.data.height === height)
  }, PATIENCE_MS)
  return app
}

const named = (frames: SseFrame[], event: string): SseFrame[] => frames.filter(frame => frame.event === event)
const heights = (frames: SseFrame[]): number[] => named(frames, 'block').map(frame => frame.data.height)

/** The time the node gives the block `hash`. */
async function blockTime (hash: string): Promise<number> {
  return (await privateRpc('getblockheader', [hash]) as { time: number }).time
}

describe('the event stream on a real node', () => {
  it('sends a block staked live to a client following blocks, with the height and hash the node reports', async (t) => {
    const app = await service(t)
    const stream = await openStream(t, `${app.url}/api/events?topics=blocks`)
    assert.equal(stream.status, 200)
    const height = await stakeBlock()
    const best = await bestBlock()
    assert.equal(best.height, height)
    await stream.until(`block ${height}`, frames => heights(frames).includes(height), PATIENCE_MS)
    const [block] = named(stream.frames, 'block')
    assert.deepEqual(block?.data, { topic: 'blocks', height, hash: best.hash, time: await blockTime(best.hash) })
    assert.match(block?.id ?? '', /^\d+-\d+$/)
    assert.deepEqual(heights(stream.frames), [height], 'once')
  })

  it('sends a payment to a followed address once its block is staked, and nothing while it waits in the mempool', async (t) => {
    const app = await service(t)
    const receiver = await walletAddress()
    const payment = await payFromWallet(receiver, 150_000_000, 'live events contract')
    // The sender's change comes back to an address of its own: followed too, it is reported as well.
    const stream = await openStream(t, `${app.url}/api/events?topics=blocks,address:${receiver},address:${payment.changeAddress}`)
    // A block staked while the payment is held in the mempool: the node announces nothing for it.
    await holdOutOfBlocks(payment.txid)
    const before = await stakeBlock()
    await holdOutOfBlocks(payment.txid, false)
    const paidAt = await stakeBlock()
    await stream.until('the payment and its change', frames => named(frames, 'transaction').length === 2, PATIENCE_MS)
    const onChain = (await publicRpc('getrawtransaction', [payment.txid])).result as { height: number, blockHash: string, nTime: number }
    assert.equal(onChain.height, paidAt)
    assert.deepEqual(stream.frames.map(frame => [frame.event, frame.data.height]), [['block', before], ['block', paidAt], ['transaction', paidAt], ['transaction', paidAt]],
      'the block first, then its payments; none before the block holding it')
    const byAddress = new Map(named(stream.frames, 'transaction').map(frame => [frame.data.address, frame.data]))
    const where = { txid: payment.txid, height: paidAt, blockHash: onChain.blockHash, time: onChain.nTime }
    assert.deepEqual(byAddress.get(receiver), { topic: `address:${receiver}`, address: receiver, nout: 0, amount: 150_000_000, ...where })
    // The memo is output 1; the change, output 2.
    assert.deepEqual(byAddress.get(payment.changeAddress), { topic: `address:${payment.changeAddress}`, address: payment.changeAddress, nout: 2, amount: payment.changeSat, ...where })
  })

  it('sends a re-org when the tip is replaced, and a client reconnecting with Last-Event-ID gets exactly what it missed', async (t) => {
    const app = await service(t)
    const live = await openStream(t, `${app.url}/api/events?topics=blocks`)
    const leaving = await openStream(t, `${app.url}/api/events?topics=blocks`)
    const height = await stakeBlock()
    const old = await bestBlock()
    await leaving.until(`block ${height}`, frames => heights(frames).includes(height), PATIENCE_MS)
    const lastSeen = leaving.frames.at(-1)?.id as string
    leaving.close()

    // The node sends nothing for a disconnected block, nor for the one that takes its height: the
    // next block shows the change (docs/node-events.md, "Re-orgs").
    await privateRpc('invalidateblock', [old.hash])
    assert.equal(await stakeBlock(), height)
    const replacement = await bestBlock()
    const next = await stakeBlock()
    const top = await bestBlock()
    await live.until(`block ${next}`, frames => heights(frames).includes(next), PATIENCE_MS)
    const missed = live.frames.slice(live.frames.findIndex(frame => frame.id === lastSeen) + 1)
    assert.deepEqual(missed.map(frame => ({ event: frame.event, data: frame.data })), [
      { event: 'reorg', data: { topic: 'blocks', height, oldHash: old.hash, newHash: replacement.hash } },
      { event: 'block', data: { topic: 'blocks', height, hash: replacement.hash, time: await blockTime(replacement.hash) } },
      { event: 'block', data: { topic: 'blocks', height: next, hash: top.hash, time: await blockTime(top.hash) } },
    ])

    // As an EventSource reconnects: the id of the last event it got.
    const again = await openStream(t, `${app.url}/api/events?topics=blocks`, { 'last-event-id': lastSeen })
    await again.until('the events it missed', frames => frames.length === missed.length, PATIENCE_MS)
    const after = await stakeBlock()
    await again.until(`block ${after}`, frames => heights(frames).includes(after), PATIENCE_MS)
    await live.until(`block ${after}`, frames => heights(frames).includes(after), PATIENCE_MS)
    assert.deepEqual(again.frames, [...missed, live.frames.at(-1)], 'what it missed in order, each once, under the same ids, then live')
    assert.equal(named(again.frames, 'resync').length, 0)
  })
})
