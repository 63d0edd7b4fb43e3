// The page's one client of this service: bastyon-miniapp-client, served at /client/ as a mini-app
// ships it. Its calls, its session (in memory only: gone on reload), its live events and its
// payments all go through it.
//
// Who signs and who pays is known a moment after the page starts: inside Bastyon, the host's SDK
// (sdk.sign, sdk.payment, sdk.registerForNotifications); in a plain browser, in `npm run demo`
// only, the demo's stand-ins: `?signer=<name>` signs as a made-up user of that name (and
// registers them for notifications at the demo's proxy emulator) and `?wallet=demo` pays from the
// emulator's wallet, each offered only when this service answers its route (GET /demo/signer,
// GET /demo/notifications, GET /demo/wallet), which `npm run demo` alone mounts. Anywhere else, neither.
import { connectHost, createClient, demoHost } from '/client/index.js'

/**
 * @typedef {{ signs: boolean, payer: 'bastyon' | 'demo' | 'none', walletAddress?: string, registers: 'bastyon' | 'demo' | 'none' }} Hosting
 */

let resolveHost
const hostReady = new Promise(resolve => { resolveHost = resolve })

/** The host as the client asks it: the one found, once found; its refusal where there is none. */
const lateHost = {
  async sign (text) {
    const host = await hostReady
    if (typeof host?.sign !== 'function') throw new Error('no host to sign with: open the app in Bastyon')
    return host.sign(text)
  },
  async payment (request) {
    const host = await hostReady
    if (typeof host?.payment !== 'function') throw new Error('no host to pay with: open the app in Bastyon')
    return host.payment(request)
  },
  async registerForNotifications () {
    const host = await hostReady
    if (typeof host?.registerForNotifications !== 'function') throw new Error('no host to register with: open the app in Bastyon')
    return host.registerForNotifications()
  },
}

export const client = createClient({ host: lateHost })

/** What the demo's route answers, or undefined where this service is not the demo. */
async function demoOffer (path) {
  try {
    return await client.request(path, { cache: 'no-cache' })
  } catch {
    return undefined
  }
}

async function findHost (query) {
  const bastyon = await connectHost()
  if (bastyon !== undefined) {
    resolveHost(bastyon)
    return { signs: true, payer: typeof bastyon.payment === 'function' ? 'bastyon' : 'none', registers: typeof bastyon.registerForNotifications === 'function' ? 'bastyon' : 'none' }
  }
  const signer = query.get('signer')
  const [signerOffer, walletOffer, notificationsOffer] = await Promise.all([
    signer === null ? undefined : demoOffer(`/demo/signer?signer=${encodeURIComponent(signer)}`),
    query.get('wallet') === 'demo' ? demoOffer('/demo/wallet') : undefined,
    signer === null ? undefined : demoOffer('/demo/notifications'),
  ])
  const demo = demoHost(signer === null ? {} : { signer })
  const registers = signerOffer !== undefined && notificationsOffer !== undefined
  resolveHost({
    sign: signerOffer === undefined ? undefined : demo.sign,
    payment: walletOffer === undefined ? undefined : demo.payment,
    registerForNotifications: registers ? demo.registerForNotifications : undefined,
  })
  return { signs: signerOffer !== undefined, payer: walletOffer === undefined ? 'none' : 'demo', walletAddress: walletOffer?.address, registers: registers ? 'demo' : 'none' }
}

/** @type {Promise<Hosting>} */
export const hosting = findHost(new URLSearchParams(location.search))
