import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isPocketnetAddress } from '../../packages/pocketnet-client/address.js'
import { getnodeinfo } from '../../packages/pocketnet-client/methods/getnodeinfo.js'
import { getuserprofile } from '../../packages/pocketnet-client/methods/getuserprofile.js'
import type { CallContext, MethodSpec } from '../../packages/pocketnet-client/methods/method-spec.js'
import { RPC_TABLE } from '../../packages/pocketnet-client/methods/table.js'
import { forNodeVersion, isBefore0221, tableParams } from '../../packages/pocketnet-client/methods/table-spec.js'
import { search, type SearchParams } from '../../packages/pocketnet-client/methods/search.js'

const ADDRESS = 'P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88'
/** An account() of music.app on testnet signed with this address's key (docs/bastyon-signatures.md). */
const TESTNET_ADDRESS = 'TGSzZGCTaYjjmMZontBcdi3M9EToS5ztEp'

const MAINNET = { network: 'main' } as const

function wire<P> (spec: MethodSpec<P, unknown>, params: P, version?: string, context: CallContext = MAINNET): unknown[] {
  // As the client sends it: the method's own meaning, then the table's one encoder, then the node's version.
  const method = RPC_TABLE[spec.name]
  return forNodeVersion(method, tableParams(spec.name, method, spec.toWire(params, context)), version)
}

describe('param encoding (pocketnet-client alone, no server)', () => {
  it('sends getnodeinfo with no params', () => {
    assert.deepEqual(wire(getnodeinfo, undefined), [])
  })

  it('sends getuserprofile as [address, "1"] for the basic form', () => {
    assert.deepEqual(wire(getuserprofile, { address: ADDRESS, shortForm: 'basic' }), [ADDRESS, '1'])
  })

  it('sends getuserprofile with a list of addresses and "0" for the full form', () => {
    const other = 'PXZYLn5kyz1KGh2eHfrc3V1Hn4nYZHe8og'
    assert.deepEqual(wire(getuserprofile, { address: [ADDRESS, other], shortForm: 'full' }), [[ADDRESS, other], '0'])
  })

  it('rejects a malformed address before the wire', () => {
    assert.throws(() => wire(getuserprofile, { address: 'P8bbRWJknHBXJRBTDSS88uQJSFvX67iN89' }), { code: 'RPC_ERR_INVALID_PARAMS' })
  })

  it('takes the addresses of the client\'s network only', () => {
    const testnet = { network: 'test' } as const
    assert.deepEqual(wire(getuserprofile, { address: TESTNET_ADDRESS }, undefined, testnet), [TESTNET_ADDRESS, '1'])
    assert.throws(() => wire(getuserprofile, { address: TESTNET_ADDRESS }), { message: /starting with "P"/ })
    assert.throws(() => wire(getuserprofile, { address: ADDRESS }, undefined, testnet), { message: /testnet address: 34 Base58 characters starting with "T"/ })
    assert.throws(() => wire(search, { keyword: 'x', type: 'content', address: ADDRESS }, undefined, testnet), { code: 'RPC_ERR_INVALID_PARAMS' })
  })

  it('sends a content search as [encoded keyword, "posts", 0, offset, size + 1] with JSON integers', () => {
    const params = wire(search, { keyword: 'café', type: 'content', pageStart: 2, pageSize: 5 })
    assert.deepEqual(params, ['caf%C3%A9', 'posts', 0, 10, 6])
    assert.equal(typeof params[3], 'number')
  })

  it('builds positions from the method table, not from key order', () => {
    const reordered = { pageSize: 5, pageStart: 2, type: 'content', keyword: 'a b' } as SearchParams
    assert.deepEqual(wire(search, reordered), ['a%20b', 'posts', 0, 10, 6])
  })

  it('sends paging as strings to nodes older than 0.22.1', () => {
    assert.deepEqual(wire(search, { keyword: 'x', type: 'content', pageStart: 1, pageSize: 10 }, '0.21.9'), ['x', 'posts', '0', '10', '11'])
    assert.deepEqual(wire(search, { keyword: 'x', type: 'content', pageStart: 1, pageSize: 10 }, '0.22.1'), ['x', 'posts', 0, 10, 11])
  })

  it('adds the sixth element only when filtering by author', () => {
    assert.equal(wire(search, { keyword: 'x', type: 'content' }).length, 5)
    assert.deepEqual(wire(search, { keyword: 'x', type: 'content', address: ADDRESS }), ['x', 'posts', 0, 0, 21, ADDRESS])
  })

  it('passes a topBlock cap in third place', () => {
    assert.deepEqual(wire(search, { keyword: 'x', type: 'posts', topBlock: 3_000_000, pageSize: 10 }), ['x', 'posts', 3_000_000, 0, 10])
  })

  it('removes double quotes, which would break the node\'s FTS5 query', () => {
    assert.equal(wire(search, { keyword: '"hello"', type: 'content' })[0], 'hello')
  })

  it('rejects paging outside the node\'s 32-bit range', () => {
    assert.throws(() => wire(search, { keyword: 'x', type: 'content', pageStart: 2 ** 30, pageSize: 4 }), { code: 'RPC_ERR_INVALID_PARAMS' })
    assert.throws(() => wire(search, { keyword: 'x', type: 'content', pageStart: -1 }), { code: 'RPC_ERR_INVALID_PARAMS' })
    assert.throws(() => wire(search, { keyword: 'x', type: 'content', pageSize: 2.5 }), { code: 'RPC_ERR_INVALID_PARAMS' })
  })

  it('rejects an unknown search type', () => {
    assert.throws(() => wire(search, { keyword: 'x', type: 'everything' as 'posts' }), /type must be one of/)
  })
})

describe('content search results', () => {
  const params: SearchParams<'content'> = { keyword: 'x', type: 'content', pageStart: 1, pageSize: 2 }
  const toWire = search.toWire(params, MAINNET)

  it('trims the extra item and says there is more', () => {
    const page = search.fromWire({ posts: { data: [{ hash: 'a' }, { hash: 'b' }, { hash: 'c' }] } }, params, toWire)
    assert.deepEqual(page, { results: [{ hash: 'a' }, { hash: 'b' }], total: 4, hasMore: true })
  })

  it('says there is no more on a short page and drops null rows', () => {
    const page = search.fromWire({ posts: { data: [{ hash: 'a' }, null] } }, params, toWire)
    assert.deepEqual(page, { results: [{ hash: 'a' }], total: 3, hasMore: false })
  })

  it('reads the node\'s {} as an empty page', () => {
    assert.deepEqual(search.fromWire({}, params, toWire), { results: [], total: 2, hasMore: false })
  })
})

describe('node versions', () => {
  it('tells legacy paging nodes apart', () => {
    assert.equal(isBefore0221('0.22.0'), true)
    assert.equal(isBefore0221('0.21.15'), true)
    assert.equal(isBefore0221('0.22.1'), false)
    assert.equal(isBefore0221('0.22.7'), false)
    assert.equal(isBefore0221('1.0.0'), false)
    assert.equal(isBefore0221('0.22.0'), true, 'asked again after another version')
    assert.equal(isBefore0221('0.22.0'), true)
    assert.equal(isBefore0221(undefined), false)
  })
})

describe('addresses', () => {
  it('accepts well-formed addresses and rejects typos', () => {
    assert.equal(isPocketnetAddress(ADDRESS), true)
    assert.equal(isPocketnetAddress('P8bbRWJknHBXJRBTDSS88uQJSFvX67iN89'), false, 'checksum')
    assert.equal(isPocketnetAddress('T8bbRWJknHBXJRBTDSS88uQJSFvX67iN88'), false, 'prefix')
    assert.equal(isPocketnetAddress('P8bbRWJknHBXJRBTDSS88uQJSFvX67iN8'), false, 'length')
    assert.equal(isPocketnetAddress('P0bbRWJknHBXJRBTDSS88uQJSFvX67iN88'), false, 'alphabet')
    assert.equal(isPocketnetAddress(42), false)
    assert.equal(isPocketnetAddress(TESTNET_ADDRESS), false, 'a testnet address on mainnet')
    assert.equal(isPocketnetAddress(TESTNET_ADDRESS, 'test'), true)
    assert.equal(isPocketnetAddress(ADDRESS, 'test'), false, 'a mainnet address on testnet')
  })
})
