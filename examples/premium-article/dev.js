// npm run dev: the app on an emulated Pocketnet node (a block every 10 s), with a stand-in signer
// and wallet for a plain browser (?signer=<name>), and its invoices in a temporary database.
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { mountDevHost, startDevnode, testSigner } from 'bastyon-miniapp-testkit'
import { build } from './server.js'

const appId = 'premium.article.app'
const devnode = await startDevnode({ blockIntervalMs: 10_000 })
const app = await build({
  logger: true,
  nodeEnv: 'development',
  pocketnetNodes: devnode.url,
  bastyonAppId: appId,
  paymentAddress: testSigner('the shop').address,
  paymentConfirmations: 2,
  paymentConfirmNodes: 1,
  dataDir: await mkdtemp(join(tmpdir(), 'premium-article-')),
})
mountDevHost(app, { devnode, appId })
app.addHook('onClose', () => devnode.close())
await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })
console.log(`Open http://127.0.0.1:${app.server.address().port}/?signer=reader (the node: ${devnode.url})`)
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => app.close().then(() => process.exit(0)))
