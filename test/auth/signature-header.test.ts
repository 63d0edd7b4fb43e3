import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { loadConfig } from '../../src/config.js'
import { startApp } from '../helpers/build-app.js'
import { addressOf, highSTwin, hostSignature, sdkSign, testKey } from '../../devnode/bastyon-host.js'
import { startEmulator } from '../helpers/start-emulator.js'
import { APP_ID, bearer, signIn } from '../helpers/sign-in.js'

const KEY = testKey('a Bastyon user')
const NOW = Date.parse('2026-11-24T10:00:00.000Z')

// Two signatures from public mini-apps, as the host made them: `sign("auth")` in
// barteron.pocketnet.app (mainnet), and an `account()` of music.app (testnet).
const BARTERON = { nonce: 'date=2026-02-16T23:27:03.278Z,exp=360,s=617574682f6261727465726f6e2e706f636b65746e65742e617070', signature: 'f46437b1bc4a1c53b2343483bb127121157296b32c7c39eaa45278b58a0676f205eff29dc4dc8ba1798dbe773a3ac361bce37ba341309a0ba4dc0c9b63465a8d', pubkey: '025085c260432cad0f38b5c84f224d99b1434b2afd97690bf8bcff91d8b0a03fba', address: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX', v: 1 }
const MUSIC = { nonce: 'date=2025-08-14T15:16:27.405Z,exp=1280,s=6d757369632e617070', signature: 'b746eaa43cb2ed62414d49751f7d39027ab9e9978602a2c8a4c8a6310c1e1f8b2914d3164c6115c58ae5c2fccadc8ca6f9347c22666fe485e0f724bc51397b65', pubkey: '0356e28a68df38b8fb2fd0bed0ccba21139fb5097cdfe34aba6aca40acac5b10c0', address: 'TGSzZGCTaYjjmMZontBcdi3M9EToS5ztEp', v: 1 }

const signatureHeader = (object: unknown): { headers: Record<string, string> } => ({ headers: { signature: JSON.stringify(object) } })

describe('compatibility mode: the ecosystem\'s Signature header', () => {
  it('is off by default: a Signature header alone is no credential', async (t) => {
    const app = await startApp(t, { nodes: [(await startEmulator(t)).url], now: () => NOW, env: { BASTYON_APP_ID: APP_ID } })
    const answer = await app.get('/api/me', signatureHeader(hostSignature(APP_ID, { key: KEY, issued: NOW, exp: 1280 })))
    assert.equal(answer.status, 401)
    assert.equal(answer.body.code, 'AUTH_MISSING')
  })

  it('accepts an account() or sign("auth") header once each, within its lifetime, and refuses the rest', async (t) => {
    let now = NOW
    const app = await startApp(t, {
      nodes: [(await startEmulator(t)).url],
      now: () => now,
      env: { BASTYON_APP_ID: APP_ID, AUTH_ACCEPT_SIGNATURE_HEADER: 'true' },
    })
    const account = hostSignature(APP_ID, { key: KEY, issued: NOW, exp: 1280 })
    const first = await app.get('/api/me', signatureHeader(account))
    assert.equal(first.status, 200, JSON.stringify(first.body))
    assert.equal(first.body.data.address, addressOf(KEY))
    const replayed = await app.get('/api/me', signatureHeader(account))
    assert.equal(replayed.status, 401)
    assert.deepEqual([replayed.body.message, replayed.body.code], ['Authentication required', 'AUTH_SIGNATURE_REPLAYED'])

    const auth = sdkSign('auth', APP_ID, { key: KEY, issued: NOW })
    assert.equal((await app.get('/api/me', signatureHeader(auth))).status, 200)
    const refusals: Array<[unknown, string]> = [
      [highSTwin(auth), 'SIG_HIGH_S'],
      [sdkSign('challenge-like', APP_ID, { key: KEY, issued: NOW }), 'SIG_SESSION_MISMATCH'],
      [hostSignature('other.pocketnet.app', { key: KEY, issued: NOW, exp: 1280 }), 'SIG_SESSION_MISMATCH'],
      [hostSignature(APP_ID, { key: KEY, issued: NOW - 1400_000, exp: 1280 }), 'SIG_EXPIRED'],
      [{ ...sdkSign('auth', APP_ID, { key: KEY, issued: NOW - 1000 }), v: undefined }, 'SIG_VERSION'],
    ]
    for (const [object, code] of refusals) {
      const answer = await app.get('/api/me', signatureHeader(object))
      assert.deepEqual([answer.status, answer.body.code], [401, code])
    }
    const garbage = await app.get('/api/me', { headers: { signature: '{not json' } })
    assert.deepEqual([garbage.status, garbage.body.code], [401, 'SIG_MALFORMED'])

    // A bearer token still works beside the header, and comes first.
    const { token } = await signIn(app, { key: KEY, issued: NOW })
    assert.equal((await app.get('/api/me', { headers: { authorization: `Bearer ${token}`, signature: JSON.stringify(account) } })).status, 200)
    // Sign-out needs a session: a header has none.
    const signOut = await app.get('/api/auth/session', { method: 'DELETE', ...signatureHeader(sdkSign('auth', APP_ID, { key: KEY, issued: NOW + 1 })) })
    assert.deepEqual([signOut.status, signOut.body.message], [400, 'No session to end'])
    assert.equal((await app.get('/api/me', bearer(token))).status, 200)

    // Past its lifetime and the skew, a header never seen before is refused too.
    now = NOW + 1280_000 + 60_001
    const late = await app.get('/api/me', signatureHeader(hostSignature(APP_ID, { key: KEY, issued: NOW, exp: 1280 })))
    assert.deepEqual([late.status, late.body.code], [401, 'SIG_EXPIRED'])
  })

  it('accepts the two real signatures at their issue time, and refuses them as expired now', async (t) => {
    const node = await startEmulator(t)
    const cases: Array<{ sample: typeof BARTERON, env: Record<string, string>, issued: number }> = [
      { sample: BARTERON, env: { BASTYON_APP_ID: 'barteron.pocketnet.app' }, issued: Date.parse('2026-02-16T23:27:03.278Z') },
      { sample: MUSIC, env: { BASTYON_APP_ID: 'music.app', POCKETNET_NETWORK: 'test' }, issued: Date.parse('2025-08-14T15:16:27.405Z') },
    ]
    for (const { sample, env, issued } of cases) {
      let now = issued + 5000
      const app = await startApp(t, { nodes: [node.url], now: () => now, env: { ...env, AUTH_ACCEPT_SIGNATURE_HEADER: 'true' } })
      const answer = await app.get('/api/me', signatureHeader(sample))
      assert.equal(answer.status, 200, JSON.stringify(answer.body))
      assert.equal(answer.body.data.address, sample.address)
      now = Date.parse('2026-11-24T00:00:00.000Z')
      const later = await startApp(t, { nodes: [node.url], now: () => now, env: { ...env, AUTH_ACCEPT_SIGNATURE_HEADER: 'true' } })
      assert.equal((await later.get('/api/me', signatureHeader(sample))).body.code, 'SIG_EXPIRED')
    }
  })

  it('needs BASTYON_APP_ID', () => {
    assert.throws(() => loadConfig({ AUTH_ACCEPT_SIGNATURE_HEADER: 'true' }), /AUTH_ACCEPT_SIGNATURE_HEADER needs BASTYON_APP_ID/)
    assert.throws(() => loadConfig({ BASTYON_APP_ID: 'Demo App' }), /BASTYON_APP_ID must be empty \(sign-in off\), or the mini-app's manifest id/)
    assert.throws(() => loadConfig({ POCKETNET_NETWORK: 'signet' }), /POCKETNET_NETWORK must be main, test or regtest/)
  })
})
