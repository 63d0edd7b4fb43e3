import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CACHE_RANGES, CLIENT_ENV, DEFAULT_CACHE_TTL_MS, DEFAULT_NODES, OPTION_RANGES } from '../../packages/pocketnet-client/index.js'
import { buildApp } from '../../src/app.js'
import { ConfigError, ConfigSchema, loadConfig } from '../../src/config.js'

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
  })

  it('reads switches', () => {
    assert.equal(loadConfig({ CACHE_SERVE_STALE: 'false' }).CACHE_SERVE_STALE, false)
    assert.throws(() => loadConfig({ CACHE_SERVE_STALE: 'maybe' }), (err: unknown) => {
      assert.ok(err instanceof ConfigError)
      assert.deepEqual(err.problems, ['CACHE_SERVE_STALE must be true or false (got "maybe")'])
      return true
    })
  })

  it('takes the defaults and bounds of the client\'s settings from pocketnet-client, one source for both', () => {
    const properties = ConfigSchema.properties as Record<string, { default?: unknown, minimum?: number, maximum?: number }>
    for (const [variable, option] of Object.entries(CLIENT_ENV)) {
      const schema = properties[variable]
      assert.ok(schema, `${variable} is configurable`)
      if (option === 'nodes') {
        assert.equal(schema.default, DEFAULT_NODES.join(','))
        continue
      }
      if (option === 'network') {
        assert.deepEqual([schema.default, (schema as { enum?: unknown }).enum], ['main', ['main', 'test', 'regtest']])
        continue
      }
      const range = OPTION_RANGES[option]
      assert.deepEqual([schema.default, schema.minimum, schema.maximum], [range.default, range.min, range.max], variable)
    }
    assert.equal(properties.CACHE_MAX_BYTES?.default, CACHE_RANGES.maxBytes.default)
    assert.equal(properties.CACHE_TTL_SEARCH_MS?.default, DEFAULT_CACHE_TTL_MS.search)
    assert.equal(properties.CACHE_TTL_SEARCH_MS?.maximum, CACHE_RANGES.ttlMs.max)
  })

  it('converts numbers and keeps the node list', () => {
    const config = loadConfig({ PORT: '8080', RPC_TIMEOUT_MS: '1500', POCKETNET_NODES: 'http://127.0.0.1:1, http://127.0.0.1:2' })
    assert.equal(config.PORT, 8080)
    assert.equal(config.RPC_TIMEOUT_MS, 1500)
    assert.equal(config.POCKETNET_NODES, 'http://127.0.0.1:1, http://127.0.0.1:2')
  })

  it('names every bad variable in one error', () => {
    assert.throws(() => loadConfig({ PORT: 'abc', RPC_TIMEOUT_MS: '5', LOG_LEVEL: 'loud', POCKETNET_NODES: 'ftp://x', RATE_LIMIT_WINDOW: '1 fortnight' }), (err: unknown) => {
      assert.ok(err instanceof ConfigError)
      assert.deepEqual(err.problems, [
        'PORT must be an integer from 0 to 65535 (got "abc")',
        'RPC_TIMEOUT_MS must be an integer from 50 to 120000 (milliseconds) (got "5")',
        'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
        'POCKETNET_NODES must be a comma-separated list of http(s) node URLs such as http://127.0.0.1:38081 (got "ftp://x")',
        'RATE_LIMIT_WINDOW must be milliseconds, or a duration such as "1 minute" or "30 seconds" (got "1 fortnight")',
      ])
      return true
    })
  })
})

describe('storage settings', () => {
  it('defaults to quotas above Telegram\'s, on with sign-in', () => {
    const config = loadConfig({ BASTYON_APP_ID: 'demo.pocketnet.app' })
    assert.deepEqual([config.STORAGE, config.STORAGE_MAX_KEYS, config.STORAGE_MAX_VALUE_BYTES, config.STORAGE_MAX_USER_BYTES, config.APP_ADMINS], [true, 1024, 65_536, 1_048_576, ''])
  })

  it('refuses a value limit above the owner\'s, admins that are no addresses, and admins without sign-in', () => {
    const problems = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env)
        return []
      } catch (err) {
        return (err as ConfigError).problems
      }
    }
    assert.deepEqual(problems({ STORAGE_MAX_VALUE_BYTES: '2048', STORAGE_MAX_USER_BYTES: '1024' }), ['STORAGE_MAX_VALUE_BYTES must not be above STORAGE_MAX_USER_BYTES: a value that large could never be stored'])
    assert.deepEqual(problems({ STORAGE_MAX_VALUE_BYTES: '2000000' }), ['STORAGE_MAX_VALUE_BYTES must be an integer from 16 to 1048576 (bytes of one value as JSON) (got "2000000")'])
    const signIn = { BASTYON_APP_ID: 'demo.pocketnet.app' }
    assert.deepEqual(problems({ ...signIn, APP_ADMINS: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX, nope' }), ['APP_ADMINS must be empty (no admins), or a comma-separated list of addresses of POCKETNET_NETWORK that may write the app\'s collections through the API (got "nope")'])
    assert.deepEqual(problems({ APP_ADMINS: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX' }), ['APP_ADMINS needs BASTYON_APP_ID (and STORAGE not false): admins write the collections signed in'])
    assert.deepEqual(problems({ ...signIn, STORAGE: 'false', APP_ADMINS: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX' }), ['APP_ADMINS needs BASTYON_APP_ID (and STORAGE not false): admins write the collections signed in'])
    assert.equal(loadConfig({ ...signIn, APP_ADMINS: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX, PR7srzZt4EfcNb3s27grgmiG8aB9vYNV82' }).APP_ADMINS, 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX, PR7srzZt4EfcNb3s27grgmiG8aB9vYNV82')
  })

  it('defaults notifications on with sign-in, to Bastyon\'s public proxies, and refuses proxies that are no https origin and a short admin token', () => {
    const config = loadConfig({ BASTYON_APP_ID: 'demo.pocketnet.app' })
    assert.deepEqual([config.NOTIFICATIONS, config.NOTIFY_USER_INTERVAL_S, config.NOTIFY_USER_DAILY_LIMIT, config.NOTIFY_APP_DAILY_LIMIT, config.ADMIN_TOKEN], [true, 30, 100, 100_000, ''])
    assert.deepEqual(config.NOTIFY_BASTYON_PROXIES.split(','), [1, 2, 3, 4, 5, 6].map(n => `https://${n}.pocketnet.app:8899`))
    const problems = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env)
        return []
      } catch (err) {
        return (err as ConfigError).problems
      }
    }
    const rule = 'a comma-separated list of origins (https://host[:port], or http:// on a loopback host for tests) of the Bastyon proxies a user may name when opting in to notifications'
    for (const bad of ['http://1.pocketnet.app:8899', 'https://1.pocketnet.app:8899/miniapp', 'https://user:pw@proxy.example', 'ftp://proxy.example', 'http://10.0.0.1:8899']) {
      assert.deepEqual(problems({ NOTIFY_BASTYON_PROXIES: `https://ok.example,${bad}` }), [`NOTIFY_BASTYON_PROXIES must be ${rule} (got ${JSON.stringify(bad)})`], bad)
    }
    assert.deepEqual(problems({ NOTIFY_BASTYON_PROXIES: 'http://127.0.0.1:38089, https://proxy.example:8899/' }), [])
    assert.deepEqual(problems({ BASTYON_APP_ID: 'demo.pocketnet.app', NOTIFY_BASTYON_PROXIES: ' , ' }), ['NOTIFY_BASTYON_PROXIES must name at least one proxy while notifications are on (or set NOTIFICATIONS=false)'])
    assert.deepEqual(problems({ ADMIN_TOKEN: 'short' }), ['ADMIN_TOKEN must be empty (no admin routes), or a secret of at least 32 visible ASCII characters, no spaces, that operators send as Authorization: Bearer <token>'])
    assert.deepEqual(problems({ ADMIN_TOKEN: 'x'.repeat(32) }), [])
  })
})

describe('configurations that would be unsafe (issue #24)', () => {
  it('refuses sign-in with several workers and no Redis, in one line saying why', () => {
    assert.throws(() => loadConfig({ BASTYON_APP_ID: 'demo.pocketnet.app', WEB_CONCURRENCY: '2' }), /WEB_CONCURRENCY above 1 with sign-in on \(BASTYON_APP_ID\) needs REDIS_URL: .*sign-out/)
    // Storage and notifications are on with sign-in, and need a database every worker shares (below); off, Redis is enough.
    assert.equal(loadConfig({ BASTYON_APP_ID: 'demo.pocketnet.app', WEB_CONCURRENCY: '2', REDIS_URL: 'redis://127.0.0.1:6379', STORAGE: 'false', NOTIFICATIONS: 'false' }).WEB_CONCURRENCY, 2)
    assert.equal(loadConfig({ WEB_CONCURRENCY: '2' }).WEB_CONCURRENCY, 2, 'without sign-in there is nothing per user to share')
  })

  it('refuses several workers on the embedded database, which one process owns, naming what needs it', () => {
    const signIn = { BASTYON_APP_ID: 'demo.pocketnet.app', REDIS_URL: 'redis://127.0.0.1:6379', WEB_CONCURRENCY: '2' }
    const payments = { PAYMENT_ADDRESS: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX', WEB_CONCURRENCY: '2' }
    const problem = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env)
        return []
      } catch (err) {
        return (err as ConfigError).problems
      }
    }
    assert.deepEqual(problem(signIn), ['WEB_CONCURRENCY above 1 with storage on (BASTYON_APP_ID, unless STORAGE=false) and notifications on (BASTYON_APP_ID, unless NOTIFICATIONS=false) needs DATABASE_URL: the embedded database can be opened by one process only'])
    assert.deepEqual(problem({ ...signIn, STORAGE: 'false' }), ['WEB_CONCURRENCY above 1 with notifications on (BASTYON_APP_ID, unless NOTIFICATIONS=false) needs DATABASE_URL: the embedded database can be opened by one process only'])
    assert.deepEqual(problem(payments), ['WEB_CONCURRENCY above 1 with payments on (PAYMENT_ADDRESS) needs DATABASE_URL: the embedded database can be opened by one process only'])
    assert.deepEqual(problem({ ...signIn, ...payments, NOTIFICATIONS: 'false' }), ['WEB_CONCURRENCY above 1 with payments on (PAYMENT_ADDRESS) and storage on (BASTYON_APP_ID, unless STORAGE=false) needs DATABASE_URL: the embedded database can be opened by one process only'])
    assert.deepEqual(problem({ ...signIn, ...payments, DATABASE_URL: 'postgres://db/app' }), [])
    assert.deepEqual(problem({ ...signIn, WEB_CONCURRENCY: '1' }), [])
  })

  it('refuses a BASTYON_APP_ID with a look-alike letter: the host\'s app ids are ASCII, and so are the sessions sign-in expects', () => {
    for (const lookAlike of ['\u03b4emo.pocketnet.app', 'dem\u043e.pocketnet.app', 'demo.pocketnet.app\u200b']) {
      assert.throws(() => loadConfig({ BASTYON_APP_ID: lookAlike }), /BASTYON_APP_ID must be empty \(sign-in off\), or the mini-app's manifest id/, JSON.stringify(lookAlike))
    }
    assert.equal(loadConfig({ BASTYON_APP_ID: 'demo.pocketnet.app' }).BASTYON_APP_ID, 'demo.pocketnet.app')
  })

  it('warns at start that TRUST_PROXY=true lets any client choose its rate-limit key', async (t) => {
    const warned = async (trustProxy: string): Promise<boolean> => {
      const lines: string[] = []
      const app = await buildApp(loadConfig({ LOG_LEVEL: 'warn', POCKETNET_NODES: 'http://127.0.0.1:9', TRUST_PROXY: trustProxy }), { logStream: { write: line => { lines.push(line) } } })
      t.after(() => app.close())
      return lines.some(line => /TRUST_PROXY=true believes every X-Forwarded-For/.test(line))
    }
    assert.equal(await warned('true'), true)
    assert.equal(await warned('127.0.0.1'), false)
  })
})
