/**
 * `npm run demo` only: a stand-in for the host's `sdk.registerForNotifications()`, so that a plain
 * browser can opt in while developing. As the host does, it asks a Bastyon proxy (the demo's
 * emulator, devnode/bastyon-proxy.ts) for a token for this app and the user, signed by the user
 * with the proxy's session; the user is the demo signer's (devnode/demo-signer.ts), by name:
 * `POST /demo/notifications/register {signer?}` answers `{message, data: <the proxy's token row>}`.
 * For the demo page to show what happens next: `GET /demo/notifications` says the demo offers it,
 * `GET /demo/notifications/pushes?address=` lists what the proxy recorded for a user, and, given
 * `gift`, `POST /demo/notifications/gift {address}` calls it: the demo grants the user
 * `demo.gift` for an hour, which the service tells them when NOTIFY_ON_ENTITLEMENT_GRANTED is on
 * (the demo turns it on).
 *
 * Only the demo's own page may use the routes that act (demo-origin.ts).
 */
import type { FastifyInstance } from 'fastify'
import { addressOf, hostSignature } from './bastyon-host.js'
import { PROXY_CONTROLS_PATH, PROXY_SESSION, type RecordedPush } from './bastyon-proxy.js'
import { refusalOf } from './demo-origin.js'
import { demoSignerKey, SIGNER_NAME, SIGNER_RULE } from './demo-signer.js'

export const DEMO_NOTIFICATIONS_PATH = '/demo/notifications'
const REGISTER_PATH = `${DEMO_NOTIFICATIONS_PATH}/register`
const GIFT_PATH = `${DEMO_NOTIFICATIONS_PATH}/gift`
/** What the demo page's gift grants. */
export const DEMO_GIFT_SKU = 'demo.gift'

export interface DemoNotificationsOptions {
  /** The mini-app's id, as the host registers it (BASTYON_APP_ID). */
  appId: string
  /** The Bastyon proxy the user registers with: the demo's emulator. */
  proxyUrl: string
  /** The signer's clock, ms since the epoch. */
  now?: () => number
  /** What the demo page's gift does for `address` (the demo: a grant the service then tells); none: no gift route. */
  gift?: (address: string) => Promise<unknown>
}

/** Base58, as addresses are written: what the routes pass on to the proxy or the gift. */
const ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{25,40}$/

export function mountDemoNotifications (app: FastifyInstance, { appId, proxyUrl, now = Date.now, gift }: DemoNotificationsOptions): void {
  app.get(DEMO_NOTIFICATIONS_PATH, async () => ({ message: 'The demo registers for notifications', data: { proxy: proxyUrl } }))
  app.get(`${DEMO_NOTIFICATIONS_PATH}/pushes`, async (request, reply) => {
    const address = (request.query as { address?: unknown }).address
    if (typeof address !== 'string' || !ADDRESS.test(address)) return reply.code(400).send({ message: 'No pushes', error: 'address must be an address' })
    const response = await fetch(`${proxyUrl}${PROXY_CONTROLS_PATH}/pushes?address=${encodeURIComponent(address)}`)
    const answer = await response.json() as { pushes?: RecordedPush[] }
    return { message: 'The pushes the demo\'s proxy recorded', data: { pushes: answer.pushes ?? [] } }
  })
  for (const path of gift === undefined ? [REGISTER_PATH] : [REGISTER_PATH, GIFT_PATH]) {
    app.options(path, { config: { cors: false } }, async (_request, reply) => {
      return reply.code(403).send({ message: 'Refused', error: 'the demo answers no other origin' })
    })
  }
  if (gift !== undefined) {
    app.post(GIFT_PATH, { config: { cors: false } }, async (request, reply) => {
      const foreign = refusalOf(request, 'the demo gives')
      if (foreign !== undefined) return reply.code(403).send({ message: 'Not given', error: foreign })
      const address = ((request.body ?? {}) as { address?: unknown }).address
      if (typeof address !== 'string' || !ADDRESS.test(address)) return reply.code(400).send({ message: 'Not given', error: 'address must be an address' })
      return { message: 'Given', data: await gift(address) }
    })
  }
  app.post(REGISTER_PATH, { config: { cors: false } }, async (request, reply) => {
    const foreign = refusalOf(request, 'the demo host registers for notifications')
    if (foreign !== undefined) return reply.code(403).send({ message: 'Not registered', error: foreign })
    const signer = ((request.body ?? {}) as { signer?: unknown }).signer ?? 'demo'
    if (typeof signer !== 'string' || !SIGNER_NAME.test(signer)) return reply.code(400).send({ message: 'Not registered', error: SIGNER_RULE })
    const key = demoSignerKey(signer)
    const response = await fetch(`${proxyUrl}/miniapp/addToken`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ appId, address: addressOf(key), signature: hostSignature(PROXY_SESSION, { key, issued: now() }) }),
    })
    const answer = await response.json().catch(() => undefined) as { result?: unknown, data?: unknown } | undefined
    if (response.status !== 200 || answer?.result !== 'success') return reply.code(502).send({ message: 'Not registered', error: `the proxy refused (HTTP ${response.status})` })
    return { message: 'Registered', data: answer.data }
  })
}
