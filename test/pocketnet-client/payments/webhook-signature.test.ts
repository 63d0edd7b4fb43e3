import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import * as lib from '../../../packages/pocketnet-client/index.js'
import { signWebhook, verifyWebhookSignature, WebhookSignatureError } from '../../../packages/pocketnet-client/payments/webhook-signature.js'

const SECRET = 'whsec_0123456789abcdefghijklmnopqrstuv'
const BODY = '{"id":"inv_x:1","type":"confirmed"}'
const T = 1_700_000_000
/** `printf '%s' '1700000000.<BODY>' | openssl dgst -sha256 -hmac <SECRET>`: computed apart from node:crypto. */
const OPENSSL_V1 = '83d889c60958a966c524cbb166a7abcb40d18693a69d903c47fc1add5bcef205'

const verify = (overrides: Partial<Parameters<typeof verifyWebhookSignature>[0]>) =>
  verifyWebhookSignature({ secret: SECRET, header: `t=${T},v1=${OPENSSL_V1}`, body: BODY, nowS: T, ...overrides })

describe('webhook signatures', () => {
  it('sign t=<seconds>,v1=<HMAC-SHA256(secret, "<t>.<body>")>, as openssl computes it', () => {
    assert.equal(signWebhook(SECRET, BODY, T), `t=${T},v1=${OPENSSL_V1}`)
    assert.equal(signWebhook(SECRET, Buffer.from(BODY), T), `t=${T},v1=${OPENSSL_V1}`, 'bytes or text: the same bytes')
  })

  it('verify a genuine one, from a string or the raw bytes, within the tolerance either way', () => {
    assert.deepEqual(verify({}), { timestampS: T })
    assert.deepEqual(verify({ body: Buffer.from(BODY) }), { timestampS: T })
    assert.deepEqual(verify({ nowS: T + 300 }), { timestampS: T })
    assert.deepEqual(verify({ nowS: T - 300 }), { timestampS: T }, 'a sender\'s clock a little ahead')
    // A sender rotating its secret may send a signature per secret: one match is enough.
    assert.deepEqual(verify({ header: `t=${T},v1=${'0'.repeat(64)},v1=${OPENSSL_V1},v0=whatever` }), { timestampS: T })
  })

  it('refuse another secret and a body changed on the way', () => {
    assert.throws(() => verify({ secret: `${SECRET}x` }), { name: 'WebhookSignatureError', code: 'WEBHOOK_ERR_SIGNATURE' })
    assert.throws(() => verify({ body: BODY.replace('confirmed', 'confirmeD') }), { code: 'WEBHOOK_ERR_SIGNATURE' })
    assert.throws(() => verify({ body: `${BODY} ` }), { code: 'WEBHOOK_ERR_SIGNATURE' }, 'a re-serialised body is another body')
    // The timestamp is signed too: moving it breaks the signature.
    assert.throws(() => verify({ header: `t=${T + 1},v1=${OPENSSL_V1}`, nowS: T + 1 }), { code: 'WEBHOOK_ERR_SIGNATURE' })
  })

  it('refuse a genuine one that is too old, or from too far ahead', () => {
    assert.throws(() => verify({ nowS: T + 301 }), { code: 'WEBHOOK_ERR_TIMESTAMP', message: /301 s old, beyond the 300 s/ })
    assert.throws(() => verify({ nowS: T - 301 }), { code: 'WEBHOOK_ERR_TIMESTAMP' })
    assert.deepEqual(verify({ nowS: T + 3600, toleranceS: 3600 }), { timestampS: T })
    assert.throws(() => verify({ nowS: T + 61, toleranceS: 60 }), { code: 'WEBHOOK_ERR_TIMESTAMP' })
  })

  it('refuse a missing, repeated or malformed header, without quoting the secret', () => {
    const malformed: Array<string | string[] | undefined | null> = [
      undefined, null, '', [`t=${T},v1=${OPENSSL_V1}`, `t=${T},v1=${OPENSSL_V1}`],
      `v1=${OPENSSL_V1}`, `t=${T}`, `t=${T},v1=${OPENSSL_V1.toUpperCase()}`, `t=${T},v1=${OPENSSL_V1.slice(1)}`,
      `t=-5,v1=${OPENSSL_V1}`, `t=1.5,v1=${OPENSSL_V1}`, `t=${T},t=${T},v1=${OPENSSL_V1}`, `t=${T};v1=${OPENSSL_V1}`,
      `t=${T},v1=${OPENSSL_V1}=`, 'garbage',
    ]
    for (const header of malformed) {
      assert.throws(() => verify({ header }), (err: unknown) => {
        assert.ok(err instanceof WebhookSignatureError, JSON.stringify(header))
        assert.equal(err.code, 'WEBHOOK_ERR_HEADER', JSON.stringify(header))
        assert.ok(!err.message.includes(SECRET) && !err.message.includes(OPENSSL_V1))
        return true
      })
    }
  })

  it('refuse to sign or verify with an empty secret, or to sign at a time that is not whole seconds', () => {
    assert.throws(() => signWebhook('', BODY, T), TypeError)
    assert.throws(() => verify({ secret: '' }), TypeError)
    assert.throws(() => signWebhook(SECRET, BODY, 1.5), TypeError)
    assert.throws(() => signWebhook(SECRET, BODY, -1), TypeError)
  })

  it('are the package\'s, with a code per rule', () => {
    assert.equal(lib.verifyWebhookSignature, verifyWebhookSignature)
    assert.equal(lib.signWebhook, signWebhook)
    assert.equal(lib.WEBHOOK_SIGNATURE_HEADER, 'X-Payment-Signature')
    assert.deepEqual(Object.keys(lib.WEBHOOK_SIGNATURE_ERROR_CODES), ['WEBHOOK_ERR_HEADER', 'WEBHOOK_ERR_SIGNATURE', 'WEBHOOK_ERR_TIMESTAMP'])
    const err = new lib.WebhookSignatureError('WEBHOOK_ERR_SIGNATURE', 'no')
    assert.ok(err instanceof Error)
    assert.deepEqual([err.name, err.code, err.message], ['WebhookSignatureError', 'WEBHOOK_ERR_SIGNATURE', 'no'])
  })
})
