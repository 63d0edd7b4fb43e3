/**
 * The emulator's WebSocket speaks the node's protocol (docs/node-events.md): registration, the
 * keep-alive, one watched address per socket, the three message kinds with the node's field
 * names and JSON types, messages only when a block connects, and the test controls.
 * "Nothing else arrived" is shown without waiting: the keep-alive's answer comes after anything
 * the node sent before it, on the same socket.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import WebSocket from 'ws'
import { ChainHistory, type Emulator } from '../../devnode/server.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { waitFor } from '../helpers/wait-for.js'

type WithAfter = { after (fn: () => unknown): void }

interface TestSocket {
  socket: WebSocket
  /** The next text frame, parsed when it is JSON. */
  next (): Promise<any>
  send (message: unknown): void
  /** Sends the keep-alive and resolves once its answer arrives, failing on anything before it. */
  nothingElse (): Promise<void>
}

async function connect (t: WithAfter, url: string): Promise<TestSocket> {
  const socket = new WebSocket(url)
  t.after(() => socket.terminate())
  const queue: unknown[] = []
  const waiting: Array<(value: unknown) => void> = []
  socket.on('message', data => {
    const text = String(data)
    let value: unknown = text
    try { value = JSON.parse(text) } catch {}
    const take = waiting.shift()
    if (take) take(value)
    else queue.push(value)
  })
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  const next = (): Promise<any> => queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise(resolve => waiting.push(resolve))
  return {
    socket,
    next,
    send: message => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
    async nothingElse () {
      socket.send('0')
      assert.equal(await next(), 1)
    },
  }
}

async function registered (t: WithAfter, node: Emulator, address: string, extra: Record<string, unknown> = {}): Promise<TestSocket> {
  const client = await connect(t, node.webSocket.url)
  client.send({ addr: address, nonce: '0', ...extra })
  assert.deepEqual(await client.next(), { result: 'Registered' })
  return client
}

async function rpc (url: string, method: string, params: unknown[]): Promise<{ status: number, body: any }> {
  const response = await fetch(`${url}/public/`, { method: 'POST', body: JSON.stringify({ method, params, id: 1 }) })
  return { status: response.status, body: await response.json() }
}

function addresses (node: Emulator): [string, string, string] {
  const [a, b, c] = node.dataset.users.map(user => user.address)
  assert.ok(a && b && c)
  return [a, b, c]
}

describe('the emulator\'s WebSocket', () => {
  describe('protocol', () => {
    it('listens on its own port, which getnodeinfo reports as ports.wss', async (t) => {
      const node = await startEmulator(t)
      assert.notEqual(node.webSocket.port, node.port)
      assert.equal(node.webSocket.url, `ws://127.0.0.1:${node.webSocket.port}/ws`)
      const { body } = await rpc(node.url, 'getnodeinfo', [])
      assert.equal(body.result.ports.wss, node.webSocket.port)
    })

    it('answers the keep-alive 0 with 1, and anything it does not understand with Nothing happened', async (t) => {
      const node = await startEmulator(t)
      const client = await connect(t, node.webSocket.url)
      client.send('0')
      assert.equal(await client.next(), 1)
      for (const message of ['hello', '[1]', { hello: 1 }, { addr: 'P1' }, { addr: 'P1', msg: 'subscribe' }, { msg: 'unsubscribe' }]) {
        client.send(message)
        assert.deepEqual(await client.next(), { result: 'Nothing happened' }, JSON.stringify(message))
      }
    })

    it('answers a registration with a bad field with the node\'s error text', async (t) => {
      const node = await startEmulator(t)
      const client = await connect(t, node.webSocket.url)
      client.send({ addr: 5, nonce: '0' })
      assert.deepEqual(await client.next(), { result: 'error', error: 'JSON value is not a string as expected' })
      client.send({ addr: 'P1', nonce: '0', block: 'x' })
      assert.deepEqual(await client.next(), { result: 'error', error: 'JSON value is not an integer as expected' })
      client.send({ addr: 'P1', msg: 7 })
      assert.deepEqual(await client.next(), { result: 'error', error: 'JSON value is not a string as expected' })
      assert.deepEqual(node.webSocket.registrations(), [])
    })

    it('registers one address per socket without checking any signature; registering again replaces it', async (t) => {
      const node = await startEmulator(t)
      const [a, b] = addresses(node)
      const client = await registered(t, node, a)
      assert.deepEqual(node.webSocket.registrations(), [{ address: a, block: node.height }])
      client.send({ addr: b, nonce: 'anything', signature: 'x', pubkey: 'y' })
      assert.deepEqual(await client.next(), { result: 'Registered' })
      assert.deepEqual(node.webSocket.registrations(), [{ address: b, block: node.height }])
    })

    it('sends a new block to each registered socket, with the node\'s fields and types', async (t) => {
      const node = await startEmulator(t, { height: 5000 })
      const [a, b] = addresses(node)
      const first = await registered(t, node, a)
      const second = await registered(t, node, b)
      const unregistered = await connect(t, node.webSocket.url)
      node.mineBlock()
      const block = node.chain.block(5001)
      assert.ok(block)
      assert.deepEqual(await first.next(), {
        addr: a, stakeTxHash: '', msg: 'new block', blockhash: block.hash, time: String(block.time), height: 5001, shares: 0, contentsLang: {},
      })
      assert.equal((await second.next()).addr, b)
      await unregistered.nothingElse()
      await first.nothingElse()
    })

    it('sends a transaction to the socket watching an output\'s address: one per address, its first output, amount and nout as strings', async (t) => {
      const node = await startEmulator(t)
      const [a, b, c] = addresses(node)
      const watchingA = await registered(t, node, a)
      const watchingB = await registered(t, node, b)
      const watchingC = await registered(t, node, c)
      const tx = node.addTransaction({ outputs: [{ address: a, amount: 150_000_000 }, { address: a, amount: 5 }, { memo: '6869', amount: 0 }, { address: b, amount: 7 }], socialType: 'comment', txType: 204, time: 1_700_000_000 })
      node.mineBlock()
      assert.equal((await watchingA.next()).msg, 'new block')
      assert.deepEqual(await watchingA.next(), { addr: a, msg: 'transaction', txid: tx.txid, time: 1_700_000_000, nout: '0', amount: '150000000', type: 'comment' })
      await watchingA.nothingElse()
      assert.equal((await watchingB.next()).msg, 'new block')
      assert.deepEqual(await watchingB.next(), { addr: b, msg: 'transaction', txid: tx.txid, time: 1_700_000_000, nout: '3', amount: '7', type: 'comment' })
      assert.equal((await watchingC.next()).msg, 'new block')
      await watchingC.nothingElse()
    })

    it('sends a social event to the socket watching the address it is for, its fields as strings', async (t) => {
      const node = await startEmulator(t)
      const [a, b] = addresses(node)
      const watchingA = await registered(t, node, a)
      const post = 'a'.repeat(64)
      const comment = node.addNotification({ address: a, mesType: 'comment', addrFrom: b, nameFrom: 'bob', posttxid: post, reason: 'post', donation: 2_500_000, time: 1_700_000_001 })
      const score = node.addNotification({ address: a, mesType: 'upvoteShare', addrFrom: b, nameFrom: 'bob', posttxid: post, upvoteVal: 5, time: 1_700_000_002 })
      node.addNotification({ address: b, mesType: 'subscribe', addrFrom: a })
      node.mineBlock()
      assert.equal((await watchingA.next()).msg, 'new block')
      assert.deepEqual(await watchingA.next(), {
        addr: a,
        msg: 'event',
        txid: comment.txid,
        time: 1_700_000_001,
        mesType: 'comment',
        addrFrom: b,
        nameFrom: 'bob',
        posttxid: post,
        parentid: '',
        answerid: '',
        reason: 'post',
        donation: 'true',
        amount: '2500000',
      })
      assert.deepEqual(await watchingA.next(), { addr: a, msg: 'event', txid: score.txid, time: 1_700_000_002, mesType: 'upvoteShare', addrFrom: b, nameFrom: 'bob', posttxid: post, upvoteVal: '5' })
      await watchingA.nothingElse()
    })

    it('sends nothing to a socket registered at or above the new height, and nothing after unsubscribe', async (t) => {
      const node = await startEmulator(t, { height: 100 })
      const [a] = addresses(node)
      const ahead = await registered(t, node, a, { block: 101 })
      const leaving = await registered(t, node, a)
      leaving.send({ addr: a, msg: 'unsubscribe' })
      assert.deepEqual(await leaving.next(), { result: 'Unsubscribed' })
      node.mineBlock()
      await ahead.nothingElse()
      await leaving.nothingElse()
      node.mineBlock()
      assert.equal((await ahead.next()).height, 102)
      await leaving.nothingElse()
    })
  })

  describe('re-orgs', () => {
    it('sends nothing when the tip is disconnected, nor for the block that replaces it, only for the next height', async (t) => {
      const node = await startEmulator(t, { height: 100 })
      const [a] = addresses(node)
      const client = await registered(t, node, a)
      node.mineBlock()
      const replaced = node.chain.block(101)
      assert.equal((await client.next()).blockhash, replaced?.hash)
      node.disconnectBlock()
      assert.equal(node.height, 100)
      assert.deepEqual((await rpc(node.url, 'getnodeinfo', [])).body.result.lastblock.height, 100)
      await client.nothingElse()
      node.mineBlock()
      const replacement = node.chain.block(101)
      assert.notEqual(replacement?.hash, replaced?.hash)
      await client.nothingElse()
      node.mineBlock()
      const next = await client.next()
      assert.equal(next.height, 102)
      const { body } = await rpc(node.url, 'getlastblocks', [3, -1])
      assert.deepEqual(body.result.map((block: { height: number, hash: string }) => [block.height, block.hash]), [
        [100, node.chain.block(100)?.hash], [101, replacement?.hash], [102, next.blockhash],
      ])
    })

    it('leaves the transactions of a disconnected block out of the next one, as a 0.22.7 node does', async (t) => {
      const node = await startEmulator(t, { height: 100 })
      const [a] = addresses(node)
      const tx = node.addTransaction({ outputs: [{ address: a, amount: 1 }] })
      node.mineBlock()
      node.disconnectBlock()
      const later = node.addTransaction({ outputs: [{ address: a, amount: 2 }] })
      node.mineBlock()
      assert.deepEqual(node.chain.block(101)?.transactions.map(each => each.txid), [later.txid])
      assert.notEqual(later.txid, tx.txid)
      assert.throws(() => new ChainHistory({ height: 5 }).disconnectTip(), /cannot be disconnected/)
    })

    it('serves one chain from two emulators given the same one, each pushing to its own sockets', async (t) => {
      const chain = new ChainHistory({ height: 300 })
      const first = await startEmulator(t, { chain })
      const second = await startEmulator(t, { chain })
      const [a] = addresses(first)
      const one = await registered(t, first, a)
      const two = await registered(t, second, a)
      first.mineBlock()
      const [x, y] = await Promise.all([one.next(), two.next()])
      assert.equal(x.blockhash, y.blockhash)
      assert.equal(second.height, 301)
      const [fromFirst, fromSecond] = await Promise.all([rpc(first.url, 'getlastblocks', [5, 299]), rpc(second.url, 'getlastblocks', [5, 299])])
      assert.deepEqual(fromFirst.body.result, fromSecond.body.result)
    })
  })

  describe('controls', () => {
    it('drops every socket at once', async (t) => {
      const node = await startEmulator(t)
      const [a] = addresses(node)
      const client = await registered(t, node, a)
      const closed = new Promise(resolve => client.socket.once('close', resolve))
      node.webSocket.dropAll()
      await closed
      await waitFor('the socket gone on the node\'s side', () => node.webSocket.connections === 0)
      assert.deepEqual(node.webSocket.registrations(), [])
    })

    it('stalls: accepts and reads, answers nothing and pushes nothing, until opened again', async (t) => {
      const node = await startEmulator(t)
      const [a] = addresses(node)
      const client = await registered(t, node, a)
      node.webSocket.setMode('stall')
      const late = await connect(t, node.webSocket.url)
      const before = node.webSocket.received
      late.send({ addr: a, nonce: '0' })
      client.send('0')
      await waitFor('both frames read in the stall', () => node.webSocket.received === before + 2)
      node.mineBlock()
      node.webSocket.setMode('open')
      // The first answer each gets is to what it sends now: nothing of the stall came through.
      await late.nothingElse()
      await client.nothingElse()
      assert.deepEqual(node.webSocket.registrations().map(each => each.address), [a])
      assert.equal(node.webSocket.accepted, 2)
    })

    it('refuses upgrades with HTTP 503 when told, and any path but /ws with 404', async (t) => {
      const node = await startEmulator(t)
      const status = (url: string): Promise<number> => new Promise((resolve, reject) => {
        const socket = new WebSocket(url)
        socket.on('unexpected-response', (_request, response) => {
          resolve(response.statusCode ?? 0)
          socket.terminate()
        })
        socket.on('open', () => reject(new Error('upgraded')))
        socket.on('error', () => {})
      })
      assert.equal(await status(`ws://127.0.0.1:${node.webSocket.port}/other`), 404)
      node.webSocket.setMode('refuse')
      assert.equal(await status(node.webSocket.url), 503)
      node.webSocket.setMode('open')
      const client = await connect(t, `${node.webSocket.url}/`)
      await client.nothingElse()
    })

    it('stops and starts with the emulator', async (t) => {
      const node = await startEmulator(t)
      const client = await connect(t, node.webSocket.url)
      const closed = new Promise(resolve => client.socket.once('close', resolve))
      await node.stop()
      await closed
      await node.start()
      await (await connect(t, node.webSocket.url)).nothingElse()
    })
  })
})

describe('the block methods of the emulator', () => {
  it('getlastblocks: ascending, at most 100, from the tip or a height; nothing above the tip', async (t) => {
    const node = await startEmulator(t, { height: 1000 })
    node.mineBlock()
    const tip = (await rpc(node.url, 'getlastblocks', [])).body.result
    assert.equal(tip.length, 10)
    assert.deepEqual(tip.map((block: { height: number }) => block.height), Array.from({ length: 10 }, (_, i) => 992 + i))
    assert.deepEqual(Object.keys(tip[9]), ['height', 'hash', 'time', 'ntx'])
    assert.equal(tip[9].hash, node.chain.tip.hash)
    assert.equal((await rpc(node.url, 'getlastblocks', [500, -1])).body.result.length, 100)
    assert.deepEqual((await rpc(node.url, 'getlastblocks', [2, 500])).body.result.map((block: { height: number }) => block.height), [499, 500])
    assert.deepEqual((await rpc(node.url, 'getlastblocks', [2, 1002])).body.result, [])
    assert.equal((await rpc(node.url, 'getlastblocks', [2, 1, null])).body.error.code, -3)
  })

  it('getcompactblock: by height or hash, with its neighbours\' hashes; -5 when not found, -8 without params', async (t) => {
    const node = await startEmulator(t, { height: 1000 })
    node.mineBlock()
    const byHeight = (await rpc(node.url, 'getcompactblock', ['', 1000])).body.result
    assert.equal(byHeight.hash, node.chain.block(1000)?.hash)
    assert.equal(byHeight.prevhash, node.chain.block(999)?.hash)
    assert.equal(byHeight.nexthash, node.chain.tip.hash)
    const byHash = (await rpc(node.url, 'getcompactblock', [node.chain.tip.hash])).body.result
    assert.equal(byHash.height, 1001)
    assert.equal(byHash.nexthash, undefined)
    assert.deepEqual((await rpc(node.url, 'getcompactblock', ['f'.repeat(64)])).body.error, { code: -5, message: 'Block not found' })
    assert.deepEqual((await rpc(node.url, 'getcompactblock', [])).body.error, { code: -8, message: 'Missing parameters' })
  })

  it('getnotifications: one block\'s notifications for every address, payments and social events, by filter', async (t) => {
    const node = await startEmulator(t, { height: 1000 })
    const [a, b, c] = addresses(node)
    const post = 'b'.repeat(64)
    const payment = node.addTransaction({ outputs: [{ address: a, amount: 300 }, { memo: '00', amount: 0 }, { address: b, amount: 40 }], inputs: [{ address: b, amount: 400 }], time: 1_700_000_000 })
    node.addTransaction({ outputs: [{ address: c, amount: 1 }], txType: 204, socialType: 'comment' })
    const comment = node.addNotification({ address: a, mesType: 'comment', addrFrom: c, nameFrom: 'carol', posttxid: post, donation: 70, time: 1_700_000_005 })
    const answer = node.addNotification({ address: b, mesType: 'comment', reason: 'answer', addrFrom: c, nameFrom: 'carol', posttxid: post, parentid: 'p', answerid: 'q' })
    node.addNotification({ address: a, mesType: 'upvoteShare', addrFrom: b, posttxid: post, upvoteVal: 4 })
    node.addNotification({ address: a, mesType: 'commentEdit', addrFrom: c, posttxid: post })
    node.mineBlock()

    const { data, notifiers } = (await rpc(node.url, 'getnotifications', [1001])).body.result
    assert.deepEqual(Object.keys(notifiers).sort(), [a, b].sort())
    assert.deepEqual(notifiers[a], { e: { money: [0], comment: [1], contentscore: [3] } })
    assert.deepEqual(notifiers[b], { e: { money: [0], answer: [2] } })
    assert.deepEqual(data[0], {
      hash: payment.txid,
      txType: 1,
      height: 1001,
      blockNum: 0,
      time: 1_700_000_000,
      inputs: [{ number: 0, value: 400, addresshash: b, scriptpubkey: '' }],
      outputs: [{ addresshash: a, value: 300, scriptpubkey: '' }, { value: 0, scriptpubkey: '6a00' }, { addresshash: b, value: 40, scriptpubkey: '' }],
    })
    assert.deepEqual(data[1], {
      hash: comment.txid,
      txType: 204,
      address: c,
      height: 1001,
      blockNum: 2,
      time: 1_700_000_005,
      rootTxHash: comment.txid,
      postHash: post,
      outputs: [{ addresshash: a, value: 70, scriptpubkey: '' }],
      account: { n: 'carol', a: '', b: '', r: 0 },
      relatedContent: { hash: post, txType: 200 },
    })
    assert.equal(data[2].hash, answer.txid)
    assert.equal(data[2].commentParentId, 'p')
    assert.equal(data[3].val, 4)

    const onlyMoney = (await rpc(node.url, 'getnotifications', [1001, ['money']])).body.result
    assert.deepEqual(Object.values(onlyMoney.notifiers).map(each => Object.keys((each as { e: object }).e)), [['money'], ['money']])
    assert.deepEqual((await rpc(node.url, 'getnotifications', [1000])).body.result, { data: [], notifiers: {} })
    assert.deepEqual((await rpc(node.url, 'getnotifications', [1002])).body.error, { code: -8, message: 'Spefified height is greater than current chain height' })
    assert.deepEqual((await rpc(node.url, 'getnotifications', [1001, ['blocking']])).body.error, { code: -8, message: 'Unexpected filter: blocking' })
    assert.equal((await rpc(node.url, 'getnotifications', ['1001'])).body.error.code, -3)
    assert.equal((await rpc(node.url, 'getnotifications', [])).body.error.code, -32603)
  })

  it('getmissedinfo: what an address missed since a block, newest first, after the tip\'s summary', async (t) => {
    const node = await startEmulator(t, { height: 1000 })
    const [a, b] = addresses(node)
    const paid = node.addTransaction({ outputs: [{ address: a, amount: 250_000_000 }] })
    node.mineBlock()
    const score = node.addNotification({ address: a, mesType: 'upvoteShare', addrFrom: b, posttxid: 'c'.repeat(64), upvoteVal: 5 })
    node.mineBlock()
    const missed = (await rpc(node.url, 'getmissedinfo', [a, 1000])).body.result
    assert.deepEqual(missed[0], { block: 1002, cntposts: 0, contentsLang: {} })
    assert.equal(missed[1].txid, paid.txid)
    assert.equal(missed[1].vout[0].value, 2.5)
    assert.deepEqual(missed[2], { addr: a, msg: 'event', mesType: 'upvoteShare', addrFrom: b, txid: score.txid, time: score.time, posttxid: 'c'.repeat(64), upvoteVal: 5, nblock: 1002 })
    assert.deepEqual((await rpc(node.url, 'getmissedinfo', [a, 1001])).body.result.length, 2)
    assert.deepEqual((await rpc(node.url, 'getmissedinfo', ['nope', 1000])).body.error, { code: -5, message: 'Invalid address: nope' })
    assert.deepEqual((await rpc(node.url, 'getmissedinfo', [a])).body.error, { code: -32603, message: 'JSON value is not an integer as expected' })
    assert.deepEqual((await rpc(node.url, 'getmissedinfo', [])).body.error, { code: -3, message: 'Expected type string, got null' })
  })
})
