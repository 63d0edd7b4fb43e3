/**
 * mountDevHost: for `npm run dev` in a plain browser, where no Bastyon host signs or pays. It adds
 * to the mini-app's own Fastify app the routes bastyon-miniapp-client's `demoHost()` calls:
 * a signer (`POST /demo/signer/sign`: what the host's `sdk.sign` gives, with a made-up key per
 * signer name, `?signer=alice` on the page), a wallet (`POST /demo/wallet/pay`: paid from the
 * devnode's wallet through its controls) and, given a Bastyon proxy (the emulator's URL), the
 * host's registration for notifications (`POST /demo/notifications/register`: the signer's
 * token at that proxy, as the host's `registerForNotifications()` leaves it). Only pages of the app's own origin may use them. The
 * keys are public: for the devnode's chain only, never beside a real node.
 */
import type { FastifyInstance } from 'fastify'
import { mountDemoNotifications } from '../../../devnode/demo-notifications.js'
import { mountDemoSigner } from '../../../devnode/demo-signer.js'
import { mountDemoWallet } from '../../../devnode/demo-wallet.js'
import type { Devnode } from './devnode.js'

export interface DevHostOptions {
  /** The devnode the wallet pays on: started with its controls (startDevnode's default). */
  devnode: Devnode
  /** The mini-app's id, as the host puts it in what it signs: the server's BASTYON_APP_ID. */
  appId: string
  /** A Bastyon proxy's URL (startBastyonProxy's), for the registration for notifications; none: that route is not mounted. */
  proxy?: string
}

export function mountDevHost (app: FastifyInstance, { devnode, appId, proxy }: DevHostOptions): void {
  mountDemoSigner(app, { appId })
  mountDemoWallet(app, { emulatorUrl: devnode.url })
  if (proxy !== undefined) mountDemoNotifications(app, { appId, proxyUrl: proxy })
}
