/**
 * `kill -9` of the service (the built service, as `npm start` runs it, on the embedded database)
 * at moments drawn from a seeded random, while an operator's client sends payouts and retries each
 * until it gets an answer, then a restart on the same DATA_DIR each time: every idempotency key
 * ends as one payout, confirmed, paid by one transaction; the receivers got the sum, none twice;
 * no output spent twice (the emulator refuses a double spend, and its chain is read here too).
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { describe, it } from 'node:test'
import { freshDataDir } from '../../scripts/pglite-template.js'
import { hotWalletKeyFile, seededRandom } from '../helpers/hot-wallet.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { listeningUrl, startService, type ServiceProcess } from '../helpers/start-service.js'
import { waitFor } from '../helpers/wait-for.js'

const PKOIN = 100_000_000
const ADMIN_TOKEN = 'payout-crash-admin-token-0123456789abcdef'
const PAYOUTS = 12
const KILLS = 5

describe('a kill -9 of the service while it pays out', () => {
  it('ends every key as one payout, confirmed once, after restarts on the same data', async (t) => {
    const node = await startEmulator(t)
    const receivers = node.dataset.users.slice(0, 4).map(user => user.address)
    const { path: keyPath, address: wallet } = hotWalletKeyFile(t)
    // One output per payout: each can be paid before the others confirm.
    const fundedFrom = node.height + 1
    for (let n = 0; n < PAYOUTS; n++) node.fund(wallet, PKOIN)
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    // The test polls every payout until it confirms: on a slow machine, past the default 300 requests a minute.
    const env = { POCKETNET_NODES: node.url, PAYOUT_KEY_FILE: keyPath, ADMIN_TOKEN, DATA_DIR: dataDir, PAYOUT_CONFIRMATIONS: '1', PAYOUT_CHECK_INTERVAL_S: '1', MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '1000000' }
    const random = seededRandom(38)

    let service: ServiceProcess = startService(t, env)
    let url = await listeningUrl(service)
    const pay = async (n: number): Promise<{ id: string, txid: string }> => {
      const body = JSON.stringify({ to: receivers[n % receivers.length], amountSat: 10_000_000 + n, idempotencyKey: `crash-${n}` })
      for (;;) {
        let refused: string | undefined
        try {
          const response = await fetch(`${url}/api/admin/payouts`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` }, body })
          if (response.status === 200 || response.status === 201) return (await response.json() as { data: { id: string, txid: string } }).data
          if (response.status < 500) refused = `${response.status} ${await response.text()}`
        } catch {
          // The process died under the request: the same key again, to the next one.
        }
        // A refusal is no crash: it would be refused again.
        if (refused !== undefined) throw new Error(`payout ${n} refused: ${refused}`)
        await new Promise(resolve => setTimeout(resolve, 20))
      }
    }
    const answers = Array.from({ length: PAYOUTS }, (_, n) => pay(n))
    for (let kill = 0; kill < KILLS; kill++) {
      await new Promise(resolve => setTimeout(resolve, Math.floor(random() * 300)))
      service.child.kill('SIGKILL')
      await service.exited
      service = startService(t, env)
      url = await listeningUrl(service)
    }
    const payouts = await Promise.all(answers)
    assert.equal(new Set(payouts.map(payout => payout.id)).size, PAYOUTS, 'one payout per key')

    // Blocks until every payout is confirmed (the checks broadcast what a kill left pending).
    const state = async (id: string): Promise<string> => {
      const response = await fetch(`${url}/api/admin/payouts/${id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
      return response.status === 200 ? (await response.json() as { data: { state: string } }).data.state : `status ${response.status}`
    }
    await waitFor('every payout confirmed', async () => {
      node.mineBlock()
      const states = await Promise.all(payouts.map(payout => state(payout.id)))
      return states.every(each => each === 'confirmed')
    }, 60_000)

    const spent = new Set<string>()
    let paidSat = 0
    const paying = new Map<string, number>()
    for (let height = fundedFrom; height <= node.chain.height; height++) {
      const block = node.chain.block(height)
      if (block === undefined) continue
      for (const transaction of block.transactions) {
        for (const input of transaction.inputs) {
          if (input.txid === undefined) continue
          const outpoint = `${input.txid}:${input.vout ?? 0}`
          assert.ok(!spent.has(outpoint), `${outpoint} spent twice`)
          spent.add(outpoint)
        }
        if (!transaction.inputs.some(input => input.address === wallet)) continue
        paying.set(transaction.txid, (paying.get(transaction.txid) ?? 0) + 1)
        for (const output of transaction.outputs) if (output.address !== undefined && receivers.includes(output.address)) paidSat += output.amount
      }
    }
    assert.deepEqual([...paying.keys()].sort(), payouts.map(payout => payout.txid).sort(), 'one transaction per payout, the stored one')
    assert.equal(paidSat, Array.from({ length: PAYOUTS }, (_, n) => 10_000_000 + n).reduce((sum, each) => sum + each, 0), 'the receivers got the sum, none twice')
    service.child.kill('SIGTERM')
    await service.exited
  })
})
