/**
 * The schema compilers the test processes share between the apps they build
 * (test/helpers/schema-compilers.ts): a schema is compiled once, and sharing never gives an app
 * another app's rules.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startApp } from '../helpers/build-app.js'
import { sharedCompilers } from '../helpers/schema-compilers.js'
import { startEmulator } from '../helpers/start-emulator.js'

const MAINNET_ADDRESS = 'P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88'
const REGTEST_ADDRESS = 'micwoYEUVptxfhCnvaKmbbEDdTcEUEVeo4'
type Compile = (route: { schema: unknown, method: string, url: string, httpPart?: string, httpStatus?: string }) => unknown

describe('the compilers shared by a test process', () => {
  it('give apps of two networks, built in one process, each its own network\'s address rule', async (t) => {
    const node = await startEmulator(t)
    const main = await startApp(t, { nodes: [node.url] })
    const regtest = await startApp(t, { nodes: [node.url], env: { POCKETNET_NETWORK: 'regtest' } })
    const main2 = await startApp(t, { nodes: [node.url] })
    for (const [service, own, other] of [[main, MAINNET_ADDRESS, REGTEST_ADDRESS], [regtest, REGTEST_ADDRESS, MAINNET_ADDRESS], [main2, MAINNET_ADDRESS, REGTEST_ADDRESS]] as const) {
      assert.notEqual((await service.get(`/api/user/${own}`)).status, 400, own)
      assert.equal((await service.get(`/api/user/${other}`)).status, 400, other)
    }
  })

  it('compile a schema object once, and refuse two schemas under one $id', () => {
    const { buildValidator, buildSerializer } = sharedCompilers('a network of this test')
    const validators = buildValidator?.({}, { customOptions: {} }) as unknown as Compile
    const schema = { type: 'object', properties: { n: { type: 'integer' } } }
    const route = { method: 'GET', url: '/x', httpPart: 'querystring' }
    assert.equal(validators({ schema, ...route }), validators({ schema, ...route }))
    assert.notEqual(validators({ schema: { ...schema }, ...route }), validators({ schema, ...route }), 'a new object is compiled anew')

    validators({ schema: { $id: 'thing', type: 'string' }, ...route })
    assert.throws(() => validators({ schema: { $id: 'thing', type: 'number' }, ...route }), /Two schemas with \$id thing/)

    const serializers = buildSerializer?.({}, {}) as unknown as Compile
    const response = { method: 'GET', url: '/x', httpStatus: '200' }
    assert.equal(serializers({ schema, ...response }), serializers({ schema, ...response }))
    assert.equal((serializers({ schema, ...response }) as (value: unknown) => string)({ n: 1 }), '{"n":1}')
  })
})
