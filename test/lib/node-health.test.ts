import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LatencyWindow, NodeHealth } from '../../lib/node-health.js'

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
    assert.ok(fast.score() < slow.score())
    assert.ok(fast.score() < failing.score())
    fast.inFlight = 20
    assert.ok(fast.score() > new NodeHealth(policy).score() / 10)
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
