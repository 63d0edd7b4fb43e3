/**
 * `npm run demo` only: the demo page's stand-in for the host's wallet, so that a plain browser
 * can pay a tip. The demo mounts two routes on the service; nothing else does, so outside the
 * demo the page finds no wallet and shows none (public/js/client.js; in any page, the browser
 * client's `demoHost`):
 * - `GET /demo/wallet`: the wallet's address and fee, `{message, data: {address, feeSat}}`;
 * - `POST /demo/wallet/pay {to, amountSat, memo?, feemode?}`: passed unchanged to the emulator's
 *   `POST /devnode/pay` (controls.ts), which checks it; answers `{message, data: {txid}}`, or the
 *   emulator's refusal in the envelope's `error`.
 *
 * A proxy on the page's own origin rather than CORS on the emulator: the page's CSP lets it
 * connect to its own origin only, the browser need not run on the emulator's machine (whose
 * controls answer loopback only), and the emulator's controls can go on refusing every browser.
 *
 * So only the demo's own page may pay (issue #39): any other web page the developer opens could
 * otherwise spend the wallet. The service's CORS (`CORS_ORIGINS=*` in the demo) is off for the
 * pay route, its preflight refused, and the page's origin checked (demo-origin.ts).
 */
import type { FastifyInstance } from 'fastify'
import { CONTROLS_PATH, DEVNODE_WALLET, PAYMENT_FEE_SAT } from './controls.js'
import { refusalOf } from './demo-origin.js'

export const DEMO_WALLET_PATH = '/demo/wallet'

export interface DemoWalletOptions {
  /** The emulator, with its controls on: e.g. http://127.0.0.1:38081. */
  emulatorUrl: string
}

/** What the emulator answered, read without trusting its shape. */
async function readAnswer (response: Response): Promise<any> {
  try {
    return await response.json()
  } catch {
    return undefined
  }
}

export function mountDemoWallet (app: FastifyInstance, { emulatorUrl }: DemoWalletOptions): void {
  app.get(DEMO_WALLET_PATH, async () => ({ message: 'The demo wallet', data: { address: DEVNODE_WALLET, feeSat: PAYMENT_FEE_SAT } }))

  const payPath = `${DEMO_WALLET_PATH}/pay`
  // The preflight of another origin's page: refused here, not answered by the service's CORS.
  app.options(payPath, { config: { cors: false } }, async (_request, reply) => {
    return reply.code(403).send({ message: 'Not paid', error: 'the demo wallet answers no other origin' })
  })

  app.post(payPath, { config: { cors: false } }, async (request, reply) => {
    const foreign = refusalOf(request, 'the demo wallet pays')
    if (foreign !== undefined) {
      request.log.warn({ host: request.host, origin: request.headers.origin }, `Demo wallet: refused, ${foreign}`)
      return reply.code(403).send({ message: 'Not paid', error: foreign })
    }
    let response: Response
    try {
      response = await fetch(`${emulatorUrl}${CONTROLS_PATH}/pay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request.body ?? {}),
      })
    } catch (err) {
      return reply.code(502).send({ message: 'Not paid', error: `the emulator did not answer (${(err as Error).message})` })
    }
    const answer = await readAnswer(response)
    if (response.ok && typeof answer?.txid === 'string') return { message: 'Paid', data: { txid: answer.txid } }
    const refusal = answer?.error
    // A string code is the controls' refusal; anything else is a node's answer: controls off.
    if (typeof refusal?.code !== 'string') {
      return reply.code(502).send({ message: 'Not paid', error: `the emulator's controls are off (HTTP ${response.status}): start it with controls on` })
    }
    return reply.code(response.status >= 500 ? 502 : response.status).send({ message: 'Not paid', error: `${String(refusal.message)} (${refusal.code})` })
  })
}
