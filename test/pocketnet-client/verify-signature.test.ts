import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import { SIGNATURE_ERROR_CODES, hostHex, verifySignature, type SignatureErrorCode, type VerifyOptions } from '../../packages/pocketnet-client/index.js'
import { highSTwin, hostSignature as signAsHost, testKey } from '../../devnode/bastyon-host.js'

// Two signatures from public mini-apps, as the host made them: `sign("auth")` in
// barteron.pocketnet.app (mainnet), and an `account()` of music.app (testnet).
const BARTERON = { nonce: 'date=2026-02-16T23:27:03.278Z,exp=360,s=617574682f6261727465726f6e2e706f636b65746e65742e617070', signature: 'f46437b1bc4a1c53b2343483bb127121157296b32c7c39eaa45278b58a0676f205eff29dc4dc8ba1798dbe773a3ac361bce37ba341309a0ba4dc0c9b63465a8d', pubkey: '025085c260432cad0f38b5c84f224d99b1434b2afd97690bf8bcff91d8b0a03fba', address: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX', v: 1 }
const MUSIC = { nonce: 'date=2025-08-14T15:16:27.405Z,exp=1280,s=6d757369632e617070', signature: 'b746eaa43cb2ed62414d49751f7d39027ab9e9978602a2c8a4c8a6310c1e1f8b2914d3164c6115c58ae5c2fccadc8ca6f9347c22666fe485e0f724bc51397b65', pubkey: '0356e28a68df38b8fb2fd0bed0ccba21139fb5097cdfe34aba6aca40acac5b10c0', address: 'TGSzZGCTaYjjmMZontBcdi3M9EToS5ztEp', v: 1 }
/** The day these tests were written: both samples are long expired by then. */
const LATER = Date.parse('2026-11-24T00:00:00.000Z')

const APP_ID = 'demo.pocketnet.app'
const CHALLENGE = 'c8Jq3xV0kL2mN5pR7tW9yB1dF4gH6jK8'
const SESSION = `${CHALLENGE}/${APP_ID}`
const ISSUED = Date.parse('2026-11-20T10:00:00.000Z')
const KEY = testKey('a test key')
const OTHER_KEY = testKey('another test key')

/** What the host's `signature(session, exp)` returns for `key` at `issued`. */
function hostSignature (session: string, options: { key?: Uint8Array, issued?: number, exp?: number, version?: number } = {}): Record<string, unknown> {
  return signAsHost(session, { ...options, key: options.key ?? KEY, issued: options.issued ?? ISSUED })
}

const AT_ISSUE: VerifyOptions = { session: SESSION, now: ISSUED + 5000 }

function refused (object: unknown, options: VerifyOptions, code: SignatureErrorCode): void {
  assert.throws(() => verifySignature(object, options), (err: { code?: unknown, message?: unknown }) => {
    assert.equal(err.code, code, String(err.message))
    return true
  })
}

describe('verifySignature', () => {
  it('accepts the two real signatures at their issue time, and refuses them as expired now', () => {
    const barteron = { session: 'auth/barteron.pocketnet.app', now: Date.parse('2026-02-16T23:27:08.278Z') }
    assert.equal(verifySignature(BARTERON, barteron).address, 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX')
    assert.equal(verifySignature(BARTERON, barteron).expiresAt.toISOString(), '2026-02-16T23:33:03.278Z')
    const music = { session: 'music.app', network: 'test' as const, now: Date.parse('2025-08-14T15:16:32.405Z') }
    assert.equal(verifySignature(MUSIC, music).address, 'TGSzZGCTaYjjmMZontBcdi3M9EToS5ztEp')
    refused(BARTERON, { ...barteron, now: LATER }, 'SIG_EXPIRED')
    refused(MUSIC, { ...music, now: LATER }, 'SIG_EXPIRED')
  })

  it('refuses an address of the other network', () => {
    refused(MUSIC, { session: 'music.app', now: Date.parse('2025-08-14T15:16:32.405Z') }, 'SIG_WRONG_NETWORK')
    refused(BARTERON, { session: 'auth/barteron.pocketnet.app', network: 'test', now: Date.parse('2026-02-16T23:27:08.278Z') }, 'SIG_WRONG_NETWORK')
    refused(hostSignature(SESSION, { version: 0x41 }), AT_ISSUE, 'SIG_WRONG_NETWORK')
  })

  it('accepts a signature made as the host makes it, and says who signed and until when', () => {
    const object = hostSignature(SESSION)
    const verified = verifySignature(object, AT_ISSUE)
    assert.equal(verified.address, object.address)
    assert.equal(verified.issuedAt.getTime(), ISSUED)
    assert.equal(verified.expiresAt.getTime(), ISSUED + 360_000)
    assert.equal(verified.signature, object.signature)
  })

  it('refuses a session it was not made for: without the challenge, another app, another challenge', () => {
    refused(hostSignature(`auth/${APP_ID}`), AT_ISSUE, 'SIG_SESSION_MISMATCH')
    refused(hostSignature(APP_ID), AT_ISSUE, 'SIG_SESSION_MISMATCH')
    refused(hostSignature(`${CHALLENGE}/other.pocketnet.app`), AT_ISSUE, 'SIG_SESSION_MISMATCH')
    refused(hostSignature(`x${CHALLENGE}/${APP_ID}`), AT_ISSUE, 'SIG_SESSION_MISMATCH')
  })

  it('refuses a session spelled with a look-alike letter of another script as not ASCII', () => {
    // Cyrillic о (U+043E) for the Latin o: the host's hex writes it as the byte 0xee.
    refused(hostSignature(`${CHALLENGE}/dem\u043e.pocketnet.app`), AT_ISSUE, 'SIG_SESSION_NOT_ASCII')
    refused(hostSignature(`${CHALLENGE}/\u0430pp.pocketnet.app`), { ...AT_ISSUE, session: `${CHALLENGE}/app.pocketnet.app` }, 'SIG_SESSION_NOT_ASCII')
    // A non-ASCII session expected is compared as such: another one is only a mismatch.
    refused(hostSignature(`Привет/${APP_ID}`), { ...AT_ISSUE, session: `Пока/${APP_ID}` }, 'SIG_SESSION_MISMATCH')
  })

  it('cannot tell a Greek look-alike from the ASCII session: the host signs the very same text (docs/bastyon-signatures.md)', () => {
    // δ (U+03B4) less 0x350 is 0x64, d: the same hex, nonce and signature. Only app ids being ASCII keeps it harmless.
    assert.equal(hostHex(`${CHALLENGE}/\u03b4emo.pocketnet.app`), hostHex(SESSION))
    assert.deepEqual(hostSignature(`${CHALLENGE}/\u03b4emo.pocketnet.app`), hostSignature(SESSION))
  })

  it('holds a signature to its lifetime and to the verifier\'s maximum, with a bounded skew both ways', () => {
    const object = hostSignature(SESSION)
    assert.ok(verifySignature(object, { ...AT_ISSUE, now: ISSUED + 360_000 + 60_000 }))
    refused(object, { ...AT_ISSUE, now: ISSUED + 360_000 + 60_001 }, 'SIG_EXPIRED')
    refused(object, { ...AT_ISSUE, now: ISSUED + 61_001, maxAgeSeconds: 1, clockSkewSeconds: 60 }, 'SIG_EXPIRED')
    assert.ok(verifySignature(object, { ...AT_ISSUE, now: ISSUED - 60_000 }))
    refused(object, { ...AT_ISSUE, now: ISSUED - 60_001 }, 'SIG_NOT_YET_VALID')
    refused(object, { ...AT_ISSUE, now: ISSUED - 1, clockSkewSeconds: 0 }, 'SIG_NOT_YET_VALID')
    // A lifetime the signer chose longer than the verifier allows counts as the shorter.
    const long = hostSignature(SESSION, { exp: 86_400 })
    refused(long, { ...AT_ISSUE, now: ISSUED + 1280_000 + 60_001 }, 'SIG_EXPIRED')
  })

  it('refuses the high-S twin of a valid signature', () => {
    refused(highSTwin(signAsHost(SESSION, { key: KEY, issued: ISSUED })), AT_ISSUE, 'SIG_HIGH_S')
  })

  it('refuses an object without v, or with another v: the old form skips session and lifetime', () => {
    const { v: _v, ...withoutV } = hostSignature(SESSION)
    refused(withoutV, AT_ISSUE, 'SIG_VERSION')
    for (const v of [2, '1', true, 'x']) refused({ ...hostSignature(SESSION), v }, AT_ISSUE, 'SIG_VERSION')
  })

  it('refuses another key\'s address, an edited nonce, and a signature that is not a point on the curve', () => {
    const object = hostSignature(SESSION)
    refused({ ...object, address: hostSignature(SESSION, { key: OTHER_KEY }).address }, AT_ISSUE, 'SIG_ADDRESS_MISMATCH')
    // The whole of another key's signature, address included, with this key's public key: the address check catches it first.
    refused({ ...hostSignature(SESSION, { key: OTHER_KEY }), pubkey: object.pubkey }, AT_ISSUE, 'SIG_ADDRESS_MISMATCH')
    refused({ ...object, nonce: (object.nonce as string).replace('exp=360', 'exp=361') }, AT_ISSUE, 'SIG_BAD_SIGNATURE')
    refused({ ...object, signature: '0'.repeat(64) + (object.signature as string).slice(64) }, AT_ISSUE, 'SIG_BAD_SIGNATURE')
    refused({ ...object, signature: 'f'.repeat(128) }, AT_ISSUE, 'SIG_BAD_SIGNATURE')
  })

  it('refuses anything not in the exact format, without throwing anything but its own error', () => {
    const object = hostSignature(SESSION)
    const signature = object.signature as string
    const malformed: unknown[] = [
      null, undefined, 'a string', 42, [], [object],
      JSON.stringify(object),
      { ...object, signature: `${signature}zz` },
      { ...object, signature: `${signature}00` },
      { ...object, signature: signature.toUpperCase() },
      { ...object, signature: signature.slice(2) },
      { ...object, pubkey: `04${(object.pubkey as string).slice(2)}` },
      { ...object, pubkey: `${object.pubkey as string} ` },
      { ...object, address: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeY' },
      { ...object, address: 12 },
      { ...object, nonce: (object.nonce as string).replace('.000Z', 'Z') },
      { ...object, nonce: (object.nonce as string).replace('2026-11-20', '2026-02-30') },
      { ...object, nonce: `${object.nonce as string},extra=1` },
      { ...object, nonce: (object.nonce as string).replace('exp=360', 'exp=0360') },
      { ...object, status: 'registered' },
      { nonce: object.nonce, signature, pubkey: object.pubkey, v: 1 },
    ]
    for (const candidate of malformed) refused(candidate, AT_ISSUE, 'SIG_MALFORMED')
  })

  it('encodes a session as the host does, ASCII as its UTF-8 hex, Cyrillic as single bytes', () => {
    assert.equal(hostHex('music.app'), '6d757369632e617070')
    assert.equal(hostHex('Привет'), 'cff0e8e2e5f2')
    // The host emulator encodes on its own (devnode/bastyon-host.ts): both sides agree on a Cyrillic session.
    const cyrillic = `Привет/${APP_ID}`
    assert.equal(verifySignature(hostSignature(cyrillic), { session: cyrillic, now: ISSUED }).address, hostSignature(cyrillic).address)
  })

  it('has every error code documented in the pocketnet-client README', async () => {
    const readme = await readFile(new URL('../../packages/pocketnet-client/README.md', import.meta.url), 'utf8')
    for (const [code, meaning] of Object.entries(SIGNATURE_ERROR_CODES)) {
      assert.ok(readme.includes(`| \`${code}\` | ${meaning} |`), `${code} is in packages/pocketnet-client/README.md with its meaning`)
    }
  })
})
