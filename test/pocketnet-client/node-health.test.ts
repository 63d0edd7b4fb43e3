import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LatencyWindow, NodeHealth } from '../../packages/pocketnet-client/node-health.js'

const policy = { smoothing: 0.5, baseCooldownMs: 1000, maxCooldownMs: 8000 }

describe('NodeHealth', () => {
  it('averages latency and lowers the error rate on success', () => {
    const health = new NodeHealth(policy)
    health.recordSuccess(100)
    assert.equal(health.latencyMs, 100)
    health.recordSuccess(200)
    assert.equal(health.latencyMs, 150)
    assert.equal(health.errorRate, 0)
    assert.equal(health.seen, true)
  })

  it('opens the circuit on a failure, with a cooldown that doubles up to the cap', () => {
    const health = new NodeHealth(policy)
    health.recordFailure('down', 0)
    assert.equal(health.circuit, 'open')
    assert.equal(health.retryAt, 1000)
    health.recordFailure('down', 0)
    assert.equal(health.retryAt, 2000)
    for (let i = 0; i < 10; i++) health.recordFailure('down', 0)
    assert.equal(health.retryAt, 8000)
    assert.equal(health.errorRate > 0.99, true)
    assert.equal(health.lastError, 'down')
  })

  it('closes the circuit on a success', () => {
    const health = new NodeHealth(policy)
    health.recordFailure('down', 0)
    health.recordSuccess(10)
    assert.equal(health.circuit, 'closed')
    assert.equal(health.consecutiveFailures, 0)
    assert.equal(health.errorRate, 0.25)
  })

  it('rates a slow or failing node worse than a fast healthy one', () => {
    const fast = new NodeHealth(policy)
    fast.recordSuccess(20)
    const slow = new NodeHealth(policy)
    slow.recordSuccess(200)
    const failing = new NodeHealth(policy)
    failing.recordSuccess(20)
    failing.recordFailure('x', 0)
    assert.ok(fast.score(0) < slow.score(0))
    assert.ok(fast.score(0) < failing.score(0))
    assert.ok(fast.score(20) > new NodeHealth(policy).score(0) / 10)
  })

  it('weighs latency, recent failures and calls in flight as documented', () => {
    const health = new NodeHealth(policy)
    health.recordSuccess(99)
    assert.equal(health.score(0), 100)
    assert.equal(health.score(4), 200, 'four calls in flight double it')
    health.recordFailure('RPC_ERR_TIMEOUT', 0)
    // An error rate of 0.5 (smoothing 0.5 from 0) makes it 1 + 4 × 0.5 = 3 times slower.
    assert.equal(health.score(0), 300)
    assert.equal(new NodeHealth(policy).score(0), 1001, 'a node that never answered counts as 1 s slow')
  })

  it('goes half-open only from open, when its probe begins', () => {
    const health = new NodeHealth(policy)
    health.beginProbe()
    assert.equal(health.circuit, 'closed')
    health.recordFailure('RPC_ERR_TRANSPORT', 0)
    health.beginProbe()
    assert.equal(health.circuit, 'half-open')
    health.recordFailure('RPC_ERR_TRANSPORT', 10)
    assert.deepEqual([health.circuit, health.retryAt], ['open', 10 + 2000], 'a failed probe reopens it for twice the cooldown')
  })

  it('keeps the latest report of a node, lower or not', () => {
    const health = new NodeHealth(policy)
    health.noteReport('0.22.7', 1000)
    health.noteReport('0.22.7', 900)
    assert.deepEqual([health.version, health.height], ['0.22.7', 900])
  })
})

describe('LatencyWindow', () => {
  it('gives the 95th percentile of recent samples', () => {
    const window = new LatencyWindow(100)
    assert.equal(window.p95(), undefined)
    for (let i = 1; i <= 100; i++) window.add(i)
    assert.equal(window.p95(), 96)
    for (let i = 1; i <= 100; i++) window.add(1000 + i)
    assert.equal(window.p95(), 1096)
    assert.equal(window.size, 100)
  })
})

describe('NodeHealth.recordOvertaken', () => {
  it('raises the latency of a node another one overtook, never lowers it', () => {
    const health = new NodeHealth(policy)
    health.recordSuccess(10)
    health.recordOvertaken(1010)
    assert.equal(health.latencyMs, 510)
    health.recordOvertaken(5)
    assert.equal(health.latencyMs, 510)
  })
})
