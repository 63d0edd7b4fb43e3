import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DEFAULT_NODES } from '../../lib/index.js'
import { ConfigError, loadConfig } from '../../src/config.js'

describe('loadConfig', () => {
  it('fills the defaults', () => {
    const config = loadConfig({})
    assert.equal(config.PORT, 3000)
    assert.equal(config.HOST, '0.0.0.0')
    assert.equal(config.RPC_DEADLINE_MS, 5000)
    assert.equal(config.RPC_TIMEOUT_MS, 2000)
    assert.equal(config.POCKETNET_PROBE_INTERVAL_MS, 30000)
    assert.equal(config.POCKETNET_MAX_LAG_BLOCKS, 3)
    assert.equal(config.NODE_ENV, 'production')
    assert.equal(config.LOG_LEVEL, 'info')
    assert.equal(config.POCKETNET_NODES, DEFAULT_NODES.join(','))
    assert.equal(config.CACHE_SERVE_STALE, true)
    assert.equal(config.HEAP_GROWING_PERCENT, 50)
  })

  it('reads switches and the heap growth', () => {
    const config = loadConfig({ CACHE_SERVE_STALE: 'false', HEAP_GROWING_PERCENT: '0' })
    assert.equal(config.CACHE_SERVE_STALE, false)
    assert.equal(config.HEAP_GROWING_PERCENT, 0)
    assert.throws(() => loadConfig({ CACHE_SERVE_STALE: 'maybe', HEAP_GROWING_PERCENT: '-1' }), (err: unknown) => {
      assert.ok(err instanceof ConfigError)
      assert.deepEqual(err.problems, [
        'CACHE_SERVE_STALE must be true or false (got "maybe")',
        "HEAP_GROWING_PERCENT must be an integer from 0 to 1000 (0: V8's own heap growth) (got \"-1\")",
      ])
      return true
    })
  })

  it('converts numbers and keeps the node list', () => {
    const config = loadConfig({ PORT: '8080', RPC_TIMEOUT_MS: '1500', POCKETNET_NODES: 'http://127.0.0.1:1, http://127.0.0.1:2' })
    assert.equal(config.PORT, 8080)
    assert.equal(config.RPC_TIMEOUT_MS, 1500)
    assert.equal(config.POCKETNET_NODES, 'http://127.0.0.1:1, http://127.0.0.1:2')
  })

  it('names every bad variable in one error', () => {
    assert.throws(() => loadConfig({ PORT: 'abc', RPC_TIMEOUT_MS: '5', LOG_LEVEL: 'loud', POCKETNET_NODES: 'ftp://x' }), (err: unknown) => {
      assert.ok(err instanceof ConfigError)
      assert.deepEqual(err.problems, [
        'PORT must be an integer from 0 to 65535 (got "abc")',
        'RPC_TIMEOUT_MS must be an integer from 50 to 120000 (milliseconds) (got "5")',
        'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
        'POCKETNET_NODES must be a comma-separated list of http(s) node URLs such as http://127.0.0.1:38081 (got "ftp://x")',
      ])
      return true
    })
  })
})
