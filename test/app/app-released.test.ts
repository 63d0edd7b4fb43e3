/**
 * An app that was closed leaves nothing of itself in the process: a process that builds many
 * (a developer's test suite through the testkit, this suite) must not keep each one alive, with
 * its caches, schemas and sampling timers. Node's own metrics are the process's: they once held
 * every app's registry, and with it the app, through prom-client's GC observer.
 */
import assert from 'node:assert/strict'
import { it } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { startEmulator } from '../helpers/start-emulator.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** Builds an app that answers one request, closes it, and gives back only a weak reference to it. */
async function closedApp (nodeUrl: string): Promise<WeakRef<object>> {
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', NODE_ENV: 'test', POCKETNET_NODES: nodeUrl, EVENTS_INGEST: 'false' }))
  assert.equal((await app.inject('/api/nodeinfo')).statusCode, 200)
  assert.match((await app.inject('/metrics')).body, /^nodejs_eventloop_lag_seconds /m, 'Node\'s own metrics are in each app\'s scrape')
  await app.close()
  return new WeakRef(app)
}

it('is collected once closed, metrics and all', async (t) => {
  const node = await startEmulator(t)
  const apps = [await closedApp(node.url), await closedApp(node.url)]
  // A collection finalizes what the previous turn's timers and promises still held.
  for (let round = 0; round < 10 && apps.some(app => app.deref() !== undefined); round++) {
    await new Promise(resolve => setImmediate(resolve))
    gc()
  }
  assert.deepEqual(apps.map(app => app.deref() === undefined), [true, true])
})
