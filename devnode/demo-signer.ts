/**
 * `npm run demo` only: a stand-in for the host's `sdk.sign`, so that a plain browser can sign in
 * while developing. It signs as the host does (devnode/bastyon-host.ts) with a made-up key of
 * its own, one per signer name: `POST /demo/signer/sign {text, signer?}` answers
 * `{message, data: {signature, address}}`, the signature object the host's SDK would give for
 * `text`. `signer` (letters, digits and hyphens, default `demo`) picks the key, so that a
 * developer can be several users (`?signer=alice` on the demo page, which asks
 * `GET /demo/signer?signer=alice` for the address first). The keys are derived from
 * the names and so public: this is for the emulator's chain only.
 *
 * Only the demo's own page may use it (demo-origin.ts).
 */
import type { FastifyInstance } from 'fastify'
import { addressOf, sdkSign, testKey } from './bastyon-host.js'
import { refusalOf } from './demo-origin.js'

export const DEMO_SIGNER_PATH = '/demo/signer'
export const SIGNER_NAME = /^[a-z0-9-]{1,32}$/
export const SIGNER_RULE = 'signer must be 1 to 32 lowercase letters, digits or hyphens'
const TEXT_MAX = 1024

export interface DemoSignerOptions {
  /** The mini-app's id, as the host puts it in what it signs (BASTYON_APP_ID). */
  appId: string
  /** The signer's clock, ms since the epoch. */
  now?: () => number
}

/** The key a signer name stands for: the same name, the same key and address, every run. */
export const demoSignerKey = (name: string): Uint8Array => testKey(`demo signer ${name}`)

export function mountDemoSigner (app: FastifyInstance, { appId, now = Date.now }: DemoSignerOptions): void {
  // The page asks whether the demo signs, and as whom: `GET /demo/signer?signer=alice`.
  app.get(DEMO_SIGNER_PATH, async (request, reply) => {
    const signer = (request.query as { signer?: unknown }).signer ?? 'demo'
    if (typeof signer !== 'string' || !SIGNER_NAME.test(signer)) return reply.code(400).send({ message: 'Not signed', error: SIGNER_RULE })
    return { message: 'The demo signer', data: { signer, address: addressOf(demoSignerKey(signer)) } }
  })
  const signPath = `${DEMO_SIGNER_PATH}/sign`
  app.options(signPath, { config: { cors: false } }, async (_request, reply) => {
    return reply.code(403).send({ message: 'Not signed', error: 'the demo signer answers no other origin' })
  })
  app.post(signPath, { config: { cors: false } }, async (request, reply) => {
    const foreign = refusalOf(request, 'the demo signer signs')
    if (foreign !== undefined) return reply.code(403).send({ message: 'Not signed', error: foreign })
    const body = (request.body ?? {}) as { text?: unknown, signer?: unknown }
    const signer = body.signer ?? 'demo'
    if (typeof body.text !== 'string' || body.text.length > TEXT_MAX) {
      return reply.code(400).send({ message: 'Not signed', error: `text must be a string of at most ${TEXT_MAX} characters` })
    }
    if (typeof signer !== 'string' || !SIGNER_NAME.test(signer)) {
      return reply.code(400).send({ message: 'Not signed', error: SIGNER_RULE })
    }
    const key = demoSignerKey(signer)
    return { message: 'Signed', data: { signature: sdkSign(body.text, appId, { key, issued: now() }), address: addressOf(key) } }
  })
}
