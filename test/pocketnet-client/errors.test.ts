import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import { MAX_MESSAGE_LENGTH, MAX_RPC_MESSAGE_LENGTH } from '../../packages/pocketnet-client/errors.js'
import * as lib from '../../packages/pocketnet-client/index.js'

const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
const libReadme = await readFile(new URL('../../packages/pocketnet-client/README.md', import.meta.url), 'utf8')

describe('error codes', () => {
  it('are listed in the pocketnet-client README table with their class and meaning', () => {
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

describe('error messages', () => {
  const hostile = `upstream http://10.1.2.3:38081/?password=secret said ${'x'.repeat(200_000)}`

  it('name the node by position and its RPC error by code and our own words, never its text', () => {
    const expected: Record<number, string> = {
      [-1]: 'miscellaneous error',
      [-3]: 'a parameter has the wrong type',
      [-5]: 'invalid address or key',
      [-8]: 'invalid parameter',
      [-28]: 'the node is still starting',
      [-32600]: 'invalid request',
      [-32601]: 'method not found',
      [-32602]: 'invalid params',
      [-32603]: 'internal error',
      [-32700]: 'parse error',
      42: 'an error code we do not know',
    }
    for (const [code, meaning] of Object.entries(expected)) {
      const err = new lib.RpcNodeError('search', { rpcCode: Number(code), rpcMessage: hostile, httpStatus: 500, retryable: false, node: 'http://10.1.2.3:38081', nodeName: 'node 2' })
      assert.equal(err.message, `Pocketnet node rejected search (node 2): ${meaning} (RPC error ${code})`)
    }
  })

  it('keep the node\'s own text apart, in rpcMessage, for logs, cut at 2000 characters', () => {
    const err = new lib.RpcNodeError('search', { rpcCode: -8, rpcMessage: hostile, httpStatus: 500, retryable: false })
    assert.equal(err.rpcMessage.length, MAX_RPC_MESSAGE_LENGTH)
    assert.ok(err.rpcMessage.startsWith('upstream http://10.1.2.3:38081/?password=secret said xxx'))
    assert.ok(err.rpcMessage.endsWith('…'))
    const short = new lib.RpcNodeError('search', { rpcCode: -8, rpcMessage: 'Invalid address', httpStatus: 500, retryable: false })
    assert.equal(short.rpcMessage, 'Invalid address')
  })

  it('are at most 1000 characters, however many attempts a message lists', () => {
    const attempts = Array.from({ length: 50 }, (_, i) => `node ${i + 1} failed: connection refused`).join('; ')
    const errors = [
      new lib.RpcUnavailableError('search', `No Pocketnet node could answer search: ${attempts}`, { cause: new AggregateError([]) }),
      new lib.RpcTimeoutError('search', `No Pocketnet node answered search in time: ${attempts}`, { timeoutMs: 1 }),
      new lib.RpcInvalidParamsError('search', 'x'.repeat(5000)),
    ]
    for (const err of errors) {
      assert.equal(err.message.length, MAX_MESSAGE_LENGTH)
      assert.ok(err.message.endsWith('…'))
    }
    assert.equal(new lib.RpcTransportError('search', 'node 1 failed: connection refused').message, 'node 1 failed: connection refused', 'a short one as it is')
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
