/**
 * The Bastyon proxy emulator in a process of its own, for `npm run bench:notifications`: a user's
 * proxy runs elsewhere, and in the benchmark's process its work (a push every 6 ms) would delay
 * autocannon's own loop and be counted as the API's latency. Started with `fork()`; over the IPC
 * channel it takes `{ apps, tokens }` and answers `{ url }`, then answers each `'count'` with the
 * pushes recorded so far and how many of them repeated one notification to one user.
 */
import { startBastyonProxy, type ProxyApp } from '../devnode/bastyon-proxy.js'

export interface ProxyProcessSetup { apps: Record<string, ProxyApp>, tokens: Array<[appId: string, address: string]> }
export interface ProxyProcessCount { pushes: number, duplicates: number }

const send = (message: unknown): void => { process.send?.(message) }

process.once('message', async (setup: ProxyProcessSetup) => {
  const proxy = await startBastyonProxy({ apps: setup.apps })
  for (const [appId, address] of setup.tokens) proxy.addToken(appId, address)
  process.on('message', (message) => {
    if (message !== 'count') return
    const pushes = proxy.pushes()
    send({ pushes: pushes.length, duplicates: pushes.length - new Set(pushes.map(push => `${push.address} ${push.body}`)).size } satisfies ProxyProcessCount)
  })
  // The parent gone (it ended, or crashed): so is this process.
  process.on('disconnect', () => { proxy.close().then(() => process.exit(0), () => process.exit(1)) })
  send({ url: proxy.url })
})
