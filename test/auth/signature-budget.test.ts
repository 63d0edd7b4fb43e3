import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_TRACKED, SignatureBudget, type BudgetScope } from '../../src/auth/signature-budget.js'
import { networkOf } from '../../src/http/client-network.js'

function clock (): { now: () => number, advance (ms: number): void } {
  let at = 1000
  return { now: () => at, advance (ms) { at += ms } }
}

/** Takes `count` checks for `client`: the scope of each refusal, or 'ok'. */
function takes (budget: SignatureBudget, client: string, count: number): Array<BudgetScope | 'ok'> {
  return Array.from({ length: count }, () => budget.take(client)?.scope ?? 'ok')
}

describe('SignatureBudget', () => {
  it('gives a client a twentieth of the checks a second, its network a tenth, the process all', () => {
    const time = clock()
    const budget = new SignatureBudget(200, time.now)
    assert.deepEqual(takes(budget, '198.51.100.7', 11), [...Array(10).fill('ok'), 'client'])
    assert.deepEqual(takes(budget, '198.51.100.8', 10), Array(10).fill('ok'))
    assert.deepEqual(takes(budget, '198.51.100.9', 1), ['network'])
    // Nine more networks take their tenths; the tenth finds the process's second spent.
    for (let network = 1; network <= 9; network++) {
      for (let client = 1; client <= 2; client++) assert.deepEqual(takes(budget, `10.0.${network}.${client}`, 10), Array(10).fill('ok'))
    }
    assert.deepEqual(budget.take('203.0.113.1'), { scope: 'process', retryAfterSeconds: 1 })
    // Buckets refill with time, each at its own rate: a tenth of a second is one check for a client.
    time.advance(100)
    assert.deepEqual(takes(budget, '198.51.100.7', 2), ['ok', 'client'])
  })

  it('counts nothing for a refused check, and says how long until the bucket that refused has one', () => {
    const time = clock()
    const budget = new SignatureBudget(20, time.now)
    // 20 a second: a client gets 1, a network 2.
    assert.equal(budget.take('2001:db8:1:1::'), undefined)
    assert.deepEqual(budget.take('2001:db8:1:1::'), { scope: 'client', retryAfterSeconds: 1 })
    assert.equal(budget.take('2001:db8:1:2::'), undefined)
    assert.deepEqual(budget.take('2001:db8:1:3::'), { scope: 'network', retryAfterSeconds: 1 })
    // The refusals above took nothing from the process: 18 checks are left for everyone else.
    const others = Array.from({ length: 19 }, (_, i) => budget.take(`10.${i}.0.1`)?.scope ?? 'ok')
    assert.deepEqual(others, [...Array(18).fill('ok'), 'process'])
    time.advance(999)
    assert.equal(budget.take('2001:db8:1:1::')?.scope, 'client')
    time.advance(1)
    assert.equal(budget.take('2001:db8:1:1::'), undefined)
  })

  it('makes a small budget at least one check a second for a client and a network', () => {
    const time = clock()
    const budget = new SignatureBudget(1, time.now)
    assert.deepEqual(takes(budget, '198.51.100.7', 2), ['ok', 'client'])
    assert.deepEqual(budget.take('203.0.113.1'), { scope: 'process', retryAfterSeconds: 1 })
    time.advance(500)
    assert.deepEqual(budget.take('203.0.113.1'), { scope: 'process', retryAfterSeconds: 1 })
    time.advance(500)
    assert.equal(budget.take('203.0.113.1'), undefined)
  })

  it('keeps a bounded number of clients: one pushed out comes back with a full bucket, the process still bounds all', () => {
    const time = clock()
    const budget = new SignatureBudget(1_000_000, time.now)
    assert.equal(budget.take('198.51.100.7'), undefined)
    for (let i = 0; i < MAX_TRACKED; i++) budget.take(`10.${i >> 8}.${i & 255}.1`)
    // 50,000 a second for a client: its bucket was full again, so it takes its whole second's worth.
    assert.deepEqual(takes(budget, '198.51.100.7', 50_001).filter(scope => scope !== 'ok'), ['client'])
  })
})

describe('networkOf', () => {
  it('groups IPv4 addresses by /24 and IPv6 /64s by /48', () => {
    assert.equal(networkOf('198.51.100.7'), '198.51.100.0/24')
    assert.equal(networkOf('2001:db8:7:1::'), '2001:db8:7::/48')
    assert.equal(networkOf('2001:db8:7:ffff::'), '2001:db8:7::/48')
    assert.equal(networkOf('2001:db8:8:1::'), '2001:db8:8::/48')
    assert.equal(networkOf('::1'), '::/48')
    assert.equal(networkOf(''), '')
  })
})
