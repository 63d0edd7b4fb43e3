import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'

/** The app's log lines at warn and above, for `env`; the client is never created, so no node is asked anything. */
async function warningsAt (t: { after (fn: () => unknown): void }, env: Record<string, string>): Promise<string[]> {
  const lines: string[] = []
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'warn', ...env }), { logStream: { write: line => { lines.push(line) } } })
  t.after(() => app.close())
  await app.ready()
  return lines.map(line => (JSON.parse(line) as { msg: string }).msg)
}

describe('the built-in node list', () => {
  it('is warned about at start in production: third-party nodes over plain HTTP can answer anything', async (t) => {
    const warnings = await warningsAt(t, { NODE_ENV: 'production' })
    assert.ok(warnings.some(message => /POCKETNET_NODES is unset: .*third-party public nodes over plain HTTP/.test(message)), warnings.join('\n'))
  })

  it('is not warned about when the operator names nodes, nor in development', async (t) => {
    const envs: Array<Record<string, string>> = [{ NODE_ENV: 'production', POCKETNET_NODES: 'http://127.0.0.1:9' }, { NODE_ENV: 'development' }]
    for (const env of envs) {
      const warnings = await warningsAt(t, env)
      assert.equal(warnings.some(message => message.includes('POCKETNET_NODES')), false, JSON.stringify(env))
    }
  })
})
