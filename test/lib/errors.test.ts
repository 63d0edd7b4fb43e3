import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import * as lib from '../../lib/index.js'

const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
const libReadme = await readFile(new URL('../../lib/README.md', import.meta.url), 'utf8')

describe('error codes', () => {
  it('are listed in the lib README table with their class and meaning', () => {
    const table = libReadme.split('<!-- error-codes:start -->')[1]?.split('<!-- error-codes:end -->')[0] ?? ''
    const rows = table.split('\n').filter(line => line.startsWith('| `RPC_ERR'))
    const documented = rows.map(row => row.split('|').map(cell => cell.trim()))
    assert.deepEqual(documented.map(cells => cells[1]?.replaceAll('`', '')), Object.keys(lib.RPC_ERROR_CODES))
    for (const cells of documented) {
      const code = cells[1]?.replaceAll('`', '') as lib.RpcErrorCode
      const className = cells[2]?.replaceAll('`', '') as keyof typeof lib
      assert.equal(typeof lib[className], 'function', `${className} is exported`)
      assert.equal(cells[4], lib.RPC_ERROR_CODES[code])
    }
  })

  it('are Error instances whose code the class sets', () => {
    const errors = [
      new lib.RpcInvalidParamsError('search', 'x'),
      new lib.RpcNodeError('search', { rpcCode: -8, rpcMessage: 'bad', httpStatus: 500, retryable: false }),
      new lib.RpcTransportError('search', 'x'),
      new lib.RpcTimeoutError('search', 'x', { timeoutMs: 1 }),
      new lib.RpcUnavailableError('search', 'x', { cause: new AggregateError([]) }),
      new lib.RpcOverloadedError('search', 'x', { retryAfterMs: 1000 }),
      new lib.RpcClosedError('search'),
    ]
    assert.deepEqual(errors.map(err => err.code), Object.keys(lib.RPC_ERROR_CODES))
    for (const err of errors) {
      assert.ok(err instanceof Error)
      assert.ok(lib.isRpcClientError(err))
      assert.equal(err.method, 'search')
      assert.equal(err.name, err.constructor.name)
    }
    assert.equal(lib.isRpcClientError(new Error('plain')), false)
  })
})

describe('README', () => {
  it('names only npm scripts that exist', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }
    const named = [...readme.matchAll(/npm run ([\w:-]+)/g)].map(match => match[1] as string)
    assert.ok(named.length > 0)
    for (const script of named) assert.ok(script in pkg.scripts, `npm run ${script} is in package.json`)
  })
})
