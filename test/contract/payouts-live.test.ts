/**
 * Payouts and refunds (issue #38) on the real node: the service signs with a throwaway regtest
 * key of its own, funded from the node's wallet, and the node decides whether our transactions are
 * valid. The built service runs as `npm start` runs it, so that it can be killed with SIGKILL.
 *
 * - 100 payouts sent by an operator's client that retries each until it is answered, while the
 *   service is killed five times, at points of progress drawn from a seeded random, and restarted
 *   on the same data: each key ends as one payout, confirmed, by one transaction the node holds in
 *   a block; the receivers got the sum, none twice.
 * - A payout's block disconnected before it is deep enough: the service sends the same bytes again
 *   (the node mines a disconnected block's transactions again only when they are sent again:
 *   docs/pocketnet-node.md) and the payout is confirmed in the new branch, paid once.
 * - A confirmed invoice refunded to its payer (the address of the payment's first input), once.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { describe, it } from 'node:test'
import { buildPayment, coinsOfUnspent, pkoinToSatoshi, walletKeyFromWif } from '../../packages/pocketnet-client/index.js'
import { freshDataDir } from '../../scripts/pglite-template.js'
import { hotWalletKeyFile, seededRandom } from '../helpers/hot-wallet.js'
import { listeningUrl, startService, type ServiceProcess } from '../helpers/start-service.js'
import { waitFor } from '../helpers/wait-for.js'
import { bestBlock, contractNode, fundFromWallet, payFromWallet, privateRpc, publicRpc, stakeBlock, walletAddress, type RpcAnswer } from './contract-node.js'

type WithAfter = { after (fn: () => unknown): void }

const PKOIN = 100_000_000
const ADMIN_TOKEN = 'payouts-live-admin-token-0123456789abcdef'
/** Long enough for a busy machine; a real node answers in far less. */
const PATIENCE_MS = 120_000
/** What the split of the funding into many outputs pays in fee, at most (100 outputs at 10,000 satoshi per 1000 bytes). */
const SPLIT_FEE_SAT = 100_000

interface HotWallet { keyPath: string, address: string }

/**
 * A new regtest key, in a file only its owner may read, its address funded with `coins` outputs of
 * `satoshi` each, confirmed: one payment from a coin of the node's wallet, then split by our own
 * wallet code into the outputs (one transaction of up to 100 outputs to itself, sent to the write path).
 */
async function hotWallet (t: WithAfter, coins: number, satoshi: number): Promise<HotWallet> {
  const { path: keyPath, wif, address } = hotWalletKeyFile(t, 'regtest')
  await fundFromWallet(address, coins * satoshi + SPLIT_FEE_SAT)
  await stakeBlock()
  if (coins > 1) {
    const split = buildPayment(walletKeyFromWif(wif, 'regtest'), {
      coins: coinsOfUnspent((await publicRpc('txunspent', [[address]])).result),
      outputs: Array.from({ length: coins }, () => ({ address, amountSat: satoshi })),
      feeRateSatPerKb: 10_000,
      nTime: Math.floor(Date.now() / 1000),
    })
    const sent = await fetch(`${contractNode.url}/post/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ method: 'sendrawtransaction', params: [split.hex, {}] }) })
    assert.equal((await sent.json() as RpcAnswer).result, split.txid)
    await stakeBlock()
  }
  const listed = (await publicRpc('txunspent', [[address]])).result as unknown[]
  assert.ok(listed.length >= coins, `${listed.length} of the ${coins} outputs funding ${address} confirmed`)
  return { keyPath, address }
}

async function startPayouts (t: WithAfter, wallet: HotWallet, env: Record<string, string> = {}): Promise<{ start: () => Promise<{ service: ServiceProcess, url: string }> }> {
  const dataDir = await freshDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  const settings = {
    POCKETNET_NETWORK: 'regtest',
    POCKETNET_NODES: contractNode.url,
    PAYOUT_KEY_FILE: wallet.keyPath,
    ADMIN_TOKEN,
    DATA_DIR: dataDir,
    PAYOUT_CONFIRMATIONS: '1',
    PAYOUT_CHECK_INTERVAL_S: '1',
    PAYMENT_CONFIRM_NODES: '1',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    ...env,
  }
  return {
    async start () {
      const service = startService(t, settings)
      return { service, url: await listeningUrl(service) }
    },
  }
}

async function admin (url: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number, body: any }> {
  const response = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  return { status: response.status, body: await response.json() }
}

/** What the node's public RPC says of a transaction: its height, or undefined while it is in no block. */
async function heightOf (txid: string): Promise<number | undefined> {
  return ((await publicRpc('getrawtransaction', [txid])).result as { height?: number }).height
}

describe('payouts on a real node', () => {
  it('100 payouts through kill -9 at random moments each end confirmed once; the receivers got the sum, none twice', async (t) => {
    const PAYOUTS = 100
    const wallet = await hotWallet(t, PAYOUTS, 20_000_000)
    const receivers = await Promise.all(Array.from({ length: 5 }, () => walletAddress()))
    const payouts = await startPayouts(t, wallet)
    let { service, url } = await payouts.start()
    const random = seededRandom(38)
    const amountOf = (n: number): number => 10_000_000 + n

    const pay = async (n: number): Promise<{ id: string, txid: string }> => {
      for (;;) {
        let refused: string | undefined
        try {
          const answer = await admin(url, 'POST', '/api/admin/payouts', { to: receivers[n % receivers.length], amountSat: amountOf(n), idempotencyKey: `live-${n}` })
          if (answer.status === 200 || answer.status === 201) return answer.body.data
          if (answer.status < 500) refused = `${answer.status} ${JSON.stringify(answer.body)}`
        } catch {
          // Killed under the request: the same key again.
        }
        // A refusal is no crash: it would be refused again (a 503 of a process still starting is tried again).
        if (refused !== undefined) throw new Error(`payout ${n} refused: ${refused}`)
        await new Promise(resolve => setTimeout(resolve, 20 + Math.floor(random() * 30)))
      }
    }
    // Ten at a time, as an operator's job would send them. Each answer moves `answered` on.
    let answered = 0
    let progressed: () => void = () => {}
    const answers: Array<Promise<{ id: string, txid: string }>> = []
    const sending = (async () => {
      for (let n = 0; n < PAYOUTS; n += 10) {
        const batch = Array.from({ length: 10 }, async (_, k) => {
          const made = await pay(n + k)
          answered++
          progressed()
          return made
        })
        answers.push(...batch)
        await Promise.all(batch)
      }
    })()
    // Five kills, each once a number of payouts drawn from the seeded random (one in each fifth of
    // the first 85) has been answered, and a few milliseconds more: each life of the process pays
    // some, and the kill lands while the rest of a batch is in flight. Progress, not time, decides,
    // so a fast machine cannot finish the payouts before the kills.
    const killAt = Array.from({ length: 5 }, (_, fifth) => fifth * 17 + 1 + Math.floor(random() * 16))
    const answeredAtKills: number[] = []
    for (const threshold of killAt) {
      await new Promise<void>(resolve => {
        const check = (): void => { if (answered >= threshold) resolve(); else progressed = check }
        check()
      })
      await new Promise(resolve => setTimeout(resolve, Math.floor(random() * 20)))
      answeredAtKills.push(answered)
      service.child.kill('SIGKILL')
      await service.exited
      ;({ service, url } = await payouts.start())
    }
    await sending
    const made = await Promise.all(answers)
    assert.ok(answeredAtKills.every(count => count < PAYOUTS), `every kill while payouts were unanswered: ${answeredAtKills.join(', ')} of ${PAYOUTS}`)
    assert.equal(new Set(made.map(payout => payout.id)).size, PAYOUTS, 'one payout per key')
    assert.equal(new Set(made.map(payout => payout.txid)).size, PAYOUTS, 'one transaction per payout')

    await waitFor('every payout confirmed', async () => {
      await stakeBlock()
      const states = await Promise.all(made.map(async payout => (await admin(url, 'GET', `/api/admin/payouts/${payout.id}`)).body.data?.state))
      return states.every(state => state === 'confirmed')
    }, PATIENCE_MS)
    for (const payout of made) assert.ok(await heightOf(payout.txid) !== undefined, `${payout.txid} in a block`)
    for (const [index, receiver] of receivers.entries()) {
      const expected = Array.from({ length: PAYOUTS }, (_, n) => n).filter(n => n % receivers.length === index).reduce((sum, n) => sum + amountOf(n), 0)
      assert.equal(pkoinToSatoshi(await privateRpc('getreceivedbyaddress', [receiver, 1]) as number), expected, `${receiver} got its sum, none twice`)
    }
    service.child.kill('SIGTERM')
    await service.exited
  })

  it('a payout whose block is disconnected is sent again and confirmed in a block of the new branch, paid once', async (t) => {
    const wallet = await hotWallet(t, 1, PKOIN)
    const receiver = await walletAddress()
    const payouts = await startPayouts(t, wallet, { PAYOUT_CONFIRMATIONS: '2' })
    const { service, url } = await payouts.start()
    const created = await admin(url, 'POST', '/api/admin/payouts', { to: receiver, amountSat: 25_000_000, idempotencyKey: 'reorg-1' })
    assert.deepEqual([created.status, created.body.data.state], [201, 'broadcast'])
    const payout = created.body.data as { id: string, txid: string }
    const paidAt = await stakeBlock()
    const paidBlock = await bestBlock()
    const state = async (): Promise<any> => (await admin(url, 'GET', `/api/admin/payouts/${payout.id}`)).body.data
    await waitFor('the payout in its block', async () => (await state()).height === paidAt, PATIENCE_MS)

    await privateRpc('invalidateblock', [paidBlock.hash])
    // The service sees it out of its block and sends the same bytes again: the node's mempool has it.
    await waitFor('the payout sent again', async () => (await state()).height === undefined && (await privateRpc('getrawmempool') as string[]).includes(payout.txid), PATIENCE_MS)
    const minedAt = await stakeBlock()
    await stakeBlock()
    await waitFor('the payout confirmed', async () => (await state()).state === 'confirmed', PATIENCE_MS)
    const confirmed = await state()
    assert.deepEqual([confirmed.txid, confirmed.height, confirmed.blockHash === paidBlock.hash], [payout.txid, minedAt, false], 'the same transaction, in the new branch')
    assert.equal(pkoinToSatoshi(await privateRpc('getreceivedbyaddress', [receiver, 1]) as number), 25_000_000, 'paid once')
    service.child.kill('SIGTERM')
    await service.exited
  })

  it('refunds a confirmed invoice to its payer once', async (t) => {
    const wallet = await hotWallet(t, 2, PKOIN)
    const merchant = await walletAddress()
    const payouts = await startPayouts(t, wallet, { PAYMENT_ADDRESS: merchant, PAYMENT_CONFIRMATIONS: '1', PAYMENT_TIPS: 'true' })
    const { service, url } = await payouts.start()
    const tip = await fetch(`${url}/api/payments/tips`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: 30_000_000 }) })
    assert.equal(tip.status, 200)
    const invoice = (await tip.json() as { data: { id: string, memo: string } }).data
    const paid = await payFromWallet(merchant, 30_000_000, invoice.memo)
    const payer = ((await publicRpc('getrawtransaction', [paid.txid])).result as { vin: Array<{ address: string }> }).vin[0]?.address
    assert.ok(payer)
    await stakeBlock()
    const reported = await fetch(`${url}/api/payments/invoices/${invoice.id}/transaction`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ txid: paid.txid }) })
    assert.equal((await reported.json() as { data: { invoice: { state: string } } }).data.invoice.state, 'confirmed')

    const refund = await admin(url, 'POST', `/api/admin/invoices/${invoice.id}/refund`, {})
    assert.deepEqual([refund.status, refund.body.data.to, refund.body.data.amountSat, refund.body.data.state], [201, payer, 30_000_000, 'broadcast'])
    const again = await admin(url, 'POST', `/api/admin/invoices/${invoice.id}/refund`, {})
    assert.deepEqual([again.status, again.body.code], [409, 'REFUND_ERR_ALREADY_REFUNDED'])
    await stakeBlock()
    await waitFor('the refund confirmed', async () => (await admin(url, 'GET', `/api/admin/payouts/${refund.body.data.id as string}`)).body.data.state === 'confirmed', PATIENCE_MS)
    const sent = (await publicRpc('getrawtransaction', [refund.body.data.txid])).result as { vout: Array<{ value: number, scriptPubKey: { addresses: string[] } }> }
    assert.deepEqual(sent.vout.filter(output => output.scriptPubKey.addresses.includes(payer)).map(output => pkoinToSatoshi(output.value)), [30_000_000])
    service.child.kill('SIGTERM')
    await service.exited
  })
})
