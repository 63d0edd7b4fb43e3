import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { closePocketNetProxyInstance, createSharedInstance, getPocketNetProxyInstance, type PocketNetProxyApi } from '../../packages/pocketnet-client/index.js'
import { startEmulator } from '../helpers/start-emulator.js'

describe('createSharedInstance', () => {
  it('shares one creation between concurrent first callers', async (t) => {
    const node = await startEmulator(t)
    const shared = createSharedInstance({ nodes: [node.url] })
    t.after(() => shared.close())
    const clients = await Promise.all(Array.from({ length: 20 }, () => shared.get()))
    assert.equal(new Set(clients).size, 1)
    assert.equal(node.callsTo('getnodeinfo').length, 1)
  })

  it('forgets a failed creation so that the next call tries again', async () => {
    let creations = 0
    const shared = createSharedInstance({}, async () => {
      creations++
      if (creations === 1) throw new Error('first creation fails')
      return { close: async () => {} } as PocketNetProxyApi
    })
    await assert.rejects(Promise.all([shared.get(), shared.get()]), /first creation fails/)
    assert.equal(creations, 1)
    const client = await shared.get()
    assert.equal(await shared.get(), client)
    assert.equal(creations, 2)
  })

  it('closes the client and creates a new one afterwards', async (t) => {
    const node = await startEmulator(t)
    const shared = createSharedInstance({ nodes: [node.url] })
    t.after(() => shared.close())
    const first = await shared.get()
    await shared.close()
    assert.equal(first.closed, true)
    const second = await shared.get()
    assert.notEqual(second, first)
  })
})

describe('getPocketNetProxyInstance', () => {
  it('returns the one process-wide client', async (t) => {
    const node = await startEmulator(t)
    t.after(() => closePocketNetProxyInstance())
    const [a, b] = await Promise.all([getPocketNetProxyInstance({ nodes: [node.url] }), getPocketNetProxyInstance()])
    assert.equal(a, b)
    assert.equal((await a.rpc.getnodeinfo()).lastblock.height, node.height)
  })
})
