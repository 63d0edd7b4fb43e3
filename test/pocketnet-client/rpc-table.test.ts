import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it, type TestContext } from 'node:test'
import { PocketNetProxyApi } from '../../packages/pocketnet-client/index.js'
import { RPC_TABLE } from '../../packages/pocketnet-client/methods/table.js'
import { TABLE_TYPES, checkShape, tableParams, type TableMethod, type TableParam } from '../../packages/pocketnet-client/methods/table-spec.js'
import { TS_TYPES, generate, readReference } from '../../scripts/generate-rpc.js'
import { startEmulator } from '../helpers/start-emulator.js'

const ROOT = new URL('../../', import.meta.url)
interface ReferenceParam { name: string, type: string, required: boolean, note: string }
interface ReferenceMethod { params: ReferenceParam[], status: string, cache_blocks: number | null }
const reference = JSON.parse(readFileSync(new URL('docs/reference/pocketnet-rpc-methods.json', ROOT), 'utf8')) as { methods: Record<string, ReferenceMethod> }
const TABLE = RPC_TABLE as Readonly<Record<string, TableMethod>>
const HAND_WRITTEN = ['getnodeinfo', 'getuserprofile', 'search']

/** A value of each table type for a representative call, and what the node must get for it. */
const SAMPLES: Record<string, { value: unknown, wire?: unknown }> = {
  integer: { value: 7 },
  string: { value: 'a b' },
  'string[]': { value: ['a', 'b'] },
  'string | string[]': { value: ['a b'] },
  'integer[]': { value: [1, 2] },
  boolean: { value: true },
  'boolean | integer': { value: true },
  'string | integer': { value: 'cursor' },
  'integer | string | (integer|string)[]': { value: [200, 'video'] },
  object: { value: { page: 0 } },
  'string (decimal integer)': { value: 5, wire: '5' },
}

function expectedWire (param: TableParam, value: unknown): unknown {
  if (param.wire === 'url-encoded') return encodeURIComponent(value as string)
  if (param.wire === 'url-encoded-list') return (value as string[]).map(each => encodeURIComponent(each))
  return SAMPLES[param.type]?.wire ?? value
}

async function client (t: TestContext, url: string): Promise<PocketNetProxyApi> {
  const api = await PocketNetProxyApi.create({ nodes: [url], cache: { ttlMs: Object.fromEntries(Object.keys(TABLE).map(name => [name, 0])) } })
  t.after(() => api.close())
  return api
}

type AnyMethod = (params?: unknown) => Promise<unknown>

describe('the method table', () => {
  it('knows at run time exactly the type notations the generator knows, and refuses a value for any other', () => {
    assert.deepEqual([...TABLE_TYPES].sort(), Object.keys(TS_TYPES).sort())
    for (const method of Object.values(RPC_TABLE)) for (const param of method.params) assert.ok(TABLE_TYPES.includes(param.type), param.type)
    const odd: TableMethod = { category: 'test', status: 'ok', cacheBlocks: null, result: 'array', params: [{ name: 'x', type: 'integer | float', required: true, wire: 'json' }] }
    assert.throws(() => tableParams('odd', odd, { x: 1 }), { code: 'RPC_ERR_INVALID_PARAMS', message: /x must be integer \| float/ })
  })

  it('refuses to generate from a type notation, wire or null rule the client does not know', () => {
    const broken = (edit: (param: Record<string, unknown>) => void): void => {
      const reference = readReference()
      edit(reference.methods.getcontents?.params[0] as unknown as Record<string, unknown>)
      generate(reference)
    }
    assert.throws(() => broken(param => { param.type = 'integer | float' }), /getcontents\.address: unknown type notation "integer \| float"/)
    assert.throws(() => broken(param => { param.wire = 'base64' }), /getcontents\.address: unknown wire "base64"/)
    assert.throws(() => broken(param => { delete param.reads_null }), /getcontents\.address: reads_null must be true or false/)
    assert.doesNotThrow(() => generate(readReference()))
  })

  it('takes each result\'s shape as data, and refuses to generate without one or from notation it does not know', () => {
    const broken = (name: string, edit: (method: Record<string, unknown>) => void): void => {
      const reference = readReference()
      edit(reference.methods[name] as unknown as Record<string, unknown>)
      generate(reference)
    }
    const shape = (name: string, value: unknown) => () => broken(name, method => { method.result_shape = value })
    const field = { name: 'tag', optional: false, kind: 'any' }
    assert.throws(() => broken('gettags', method => { delete method.result_shape }), /pocketnet-rpc-methods\.json: gettags has no result_shape/)
    assert.throws(shape('gettags', 'array of {tag, count}'), /gettags\.result_shape: must be an object \{shape, …\}/)
    assert.throws(shape('gettags', { shape: 'list' }), /gettags\.result_shape: unknown shape "list" \(array, object, string, none\)/)
    assert.throws(shape('gettags', { shape: 'array', fields: [field], sorted: true }), /gettags\.result_shape: unknown key "sorted" for shape "array"/)
    assert.throws(shape('help', { shape: 'string', fields: 'record' }), /help\.result_shape: unknown key "fields" for shape "string" \(it takes none\)/)
    assert.throws(shape('gettags', { shape: 'array', fields: [{ ...field, kind: 'number' }] }), /gettags\.result_shape\.fields\[0\]: unknown kind "number" \(list, object, any\)/)
    assert.throws(shape('gettags', { shape: 'array', fields: [{ ...field, type: 'string' }] }), /gettags\.result_shape\.fields\[0\]: unknown key "type"/)
    assert.throws(shape('gettags', { shape: 'array', fields: [{ name: 'tag', kind: 'any' }] }), /gettags\.result_shape\.fields\[0\]: optional must be true or false/)
    assert.throws(shape('gettags', { shape: 'array', fields: [field, field] }), /gettags\.result_shape\.fields\[1\]: field tag is named twice/)
    assert.throws(shape('gettags', { shape: 'array', fields: 'tags' }), /gettags\.result_shape\.fields: must be a non-empty list of \{name, optional, kind\} or "record"/)
    assert.throws(shape('getuserstate', { shape: 'object' }), /getuserstate\.result_shape\.fields: must be a non-empty list/)
    assert.throws(shape('gettags', { shape: 'array', strings: true, empty: true }), /gettags\.result_shape: strings and empty together/)
    assert.throws(shape('gettags', { shape: 'array', nullItems: false }), /gettags\.result_shape\.nullItems: must be true or left out/)
    assert.throws(shape('gettags', { shape: 'array', strings: true, nullItems: true }), /gettags\.result_shape: nullItems with strings/)
    assert.throws(shape('getpagescores', { shape: 'array', variants: ['record'] }), /getpagescores\.result_shape\.variants\[0\]: must be a non-empty list of \{name, optional, kind\}, not "record"/)
    assert.throws(shape('getmissedinfo', { shape: 'array', head: [] }), /getmissedinfo\.result_shape\.head: must be a non-empty list/)
  })

  it('writes result types from the shapes as data', () => {
    const reference = readReference()
    const method = (name: string) => reference.methods[name] as unknown as Record<string, unknown>
    method('gettags').result_shape = { shape: 'array', fields: [{ name: 'tag', optional: false, kind: 'any' }, { name: 'n', optional: true, kind: 'list' }], nullItems: true }
    method('getuserstate').result_shape = { shape: 'object', fields: 'record' }
    method('getjurymoderators').result_shape = { shape: 'array', fields: [{ name: 'address', optional: false, kind: 'object' }] }
    method('gettime').result_shape = { shape: 'string' }
    const files = generate(reference)
    const rpc = files['packages/pocketnet-client/methods/table-rpc.ts'] as string
    assert.match(rpc, /export type GettagsResult = Array<\{ tag: unknown; n\?: unknown\[\] \} \| null>\n/)
    assert.match(rpc, /export type GetuserstateResult = Record<string, unknown>\n/)
    assert.match(rpc, /export type GetjurymoderatorsResult = Array<\{ address: Record<string, unknown> \}>\n/)
    assert.match(rpc, /export type GettimeResult = string\n/)
    assert.match(files['packages/pocketnet-client/methods/table.ts'] as string, /"gettime": \{[^\n]*"result":"string"/)
    assert.match(files['packages/pocketnet-client/README.md'] as string, /`gettime\(\{ {2}\}\)` → string/)
  })

  it('is generated from the reference, and the generated files are current (npm run generate:rpc)', () => {
    for (const [path, text] of Object.entries(generate())) {
      assert.equal(readFileSync(new URL(path, ROOT), 'utf8'), text, `${path} is out of date: run npm run generate:rpc`)
    }
  })

  it('has every method of the reference, every position in order, every type and status', () => {
    assert.deepEqual(Object.keys(TABLE).sort(), Object.keys(reference.methods).sort())
    assert.equal(Object.keys(TABLE).length, 92)
    for (const [name, method] of Object.entries(reference.methods)) {
      const table = TABLE[name] as TableMethod
      assert.deepEqual(table.params.map(param => [param.name, param.type, param.required]), method.params.map(param => [param.name, param.type, param.required]), name)
      assert.equal(table.status, method.status, name)
      assert.equal(table.cacheBlocks, method.cache_blocks, name)
    }
  })

  it('never fills with null a position the node reads without a type check', () => {
    const unguarded = /get_str\(\)|get_int|get_array|get_obj|RPCTypeCheck|must be a (json )?string|must be strings/i
    let checked = 0
    for (const [name, method] of Object.entries(reference.methods)) {
      method.params.forEach((param, index) => {
        const table = (TABLE[name] as TableMethod).params[index] as TableParam
        if (!unguarded.test(param.note) || param.required) return
        checked++
        assert.notEqual(table.fill, null, `${name} ${param.name}`)
      })
    }
    assert.ok(checked > 10, `${checked} unguarded optional positions`)
  })
})

describe('every typed method, against the emulator', () => {
  it('sends the positional array the table gives, each value in the JSON type the node parses', async (t) => {
    const node = await startEmulator(t)
    const api = await client(t, node.url)
    const rpc = api.rpc as unknown as Record<string, AnyMethod>
    let called = 0
    for (const [name, method] of Object.entries(TABLE)) {
      if (HAND_WRITTEN.includes(name) || method.status === 'broken' || method.status === 'stub') continue
      const params: Record<string, unknown> = {}
      const wire: unknown[] = []
      for (const param of method.params) {
        if (param.name.startsWith('_')) {
          wire.push(param.fill)
          continue
        }
        const sample = 'only' in param ? { value: param.only } : SAMPLES[param.type]
        assert.ok(sample, `a sample for ${param.type}`)
        params[param.name] = sample.value
        wire.push(expectedWire(param, sample.value))
      }
      // Positions at the end that are never given are not sent.
      const given = (param: TableParam | undefined): boolean => param !== undefined && !param.name.startsWith('_')
      while (wire.length > 0 && !given(method.params[wire.length - 1])) wire.pop()
      await (rpc[name] as AnyMethod)(params).catch(() => {})
      assert.deepEqual(node.callsTo(name).at(-1)?.params, wire, name)
      called++
    }
    // 82 ok (getrecommendedaccountbyaddress is broken on a real 0.22.7 node) and 3 testnet-only.
    assert.equal(called, 82 + 3 - HAND_WRITTEN.length, 'every ok and testnet-only method but the hand-written ones')
  })

  it('leaves trailing optional positions out, and fills a gap with the node\'s default, never null where the node reads without a check', async (t) => {
    const node = await startEmulator(t)
    const api = await client(t, node.url)
    const post = 'c'.repeat(64)
    await api.rpc.getcomments({ postid: post }).catch(() => {})
    assert.deepEqual(node.callsTo('getcomments').at(-1)?.params, [post])
    await api.rpc.getcomments({ postid: '', comment_ids: ['x'] }).catch(() => {})
    assert.deepEqual(node.callsTo('getcomments').at(-1)?.params, ['', '', '', ['x']])
    await api.rpc.gethotposts({ contenttypes: 'video' }).catch(() => {})
    assert.deepEqual(node.callsTo('gethotposts').at(-1)?.params, [30, 4320, 0, '', 'video'])
  })

  it('sends gettags paging as decimal strings and a null in the unread third position', async (t) => {
    const node = await startEmulator(t)
    const api = await client(t, node.url)
    await api.rpc.gettags({ pageStart: 0, pageSize: 50, lang: 'en' }).catch(() => {})
    assert.deepEqual(node.callsTo('gettags').at(-1)?.params, ['0', '50', null, 'en'])
    await api.rpc.gettags().catch(() => {})
    assert.deepEqual(node.callsTo('gettags').at(-1)?.params, [])
  })

  it('sends getcontent\'s last as the number 1 or not at all: every other value makes a 0.22 node answer []', async (t) => {
    const node = await startEmulator(t)
    const api = await client(t, node.url)
    const [post] = node.dataset.posts
    assert.ok(post)
    const answer = await api.rpc.getcontent({ hashes: [post.hash] })
    assert.equal(answer[0]?.hash, post.hash)
    assert.deepEqual(node.callsTo('getcontent').at(-1)?.params, [[post.hash]])
    const latest = await api.rpc.getcontent({ hashes: [post.hash], last: 1 })
    assert.equal(latest[0]?.hash, post.hash)
    assert.deepEqual(node.callsTo('getcontent').at(-1)?.params, [[post.hash], '', 1])
    for (const last of [true, 0, '1']) {
      await assert.rejects((api.rpc.getcontent as AnyMethod)({ hashes: [post.hash], last }), { code: 'RPC_ERR_INVALID_PARAMS', message: /last must be 1: any other value makes a 0.22 node answer \[\]/ })
    }
  })

  it('refuses params of the wrong type, unknown or missing ones, before the wire', async (t) => {
    const node = await startEmulator(t)
    const api = await client(t, node.url)
    const rpc = api.rpc as unknown as Record<string, AnyMethod>
    const refusals: Array<[string, unknown, RegExp]> = [
      ['getcomments', {}, /postid is required: a string/],
      ['getcomments', { postid: 42 }, /postid must be a string \(got 42\)/],
      ['gettags', { pageStart: '0' }, /pageStart must be a whole number from 0/],
      ['gettags', { pageStart: 1.5 }, /pageStart must be a whole number from 0/],
      ['getlastblocks', { count: 2 ** 31 }, /count must be a whole number/],
      ['getusersubscribers', { address: 'P', orderdesc: 1 }, /orderdesc must be true or false/],
      ['getapps', { request: [] }, /request must be an object/],
      ['getaddressregistration', { addresses: 'P' }, /addresses must be a list of strings/],
      ['getcomments', { postid: 'p', page: 1 }, /getcomments has no param "page"; it takes postid, parentid, address, comment_ids/],
      ['getcomments', ['p'], /params must be an object of named params/],
    ]
    for (const [name, params, message] of refusals) {
      await assert.rejects((rpc[name] as AnyMethod)(params), { code: 'RPC_ERR_INVALID_PARAMS', message }, name)
    }
    assert.equal(node.calls.filter(call => call.method !== 'getnodeinfo').length, 0, 'nothing reached the node')
  })

  it('fails fast on a broken or stub method, saying why', async (t) => {
    const node = await startEmulator(t)
    const api = await client(t, node.url)
    const rpc = api.rpc as unknown as Record<string, AnyMethod>
    await assert.rejects((rpc.getbalancehistory as AnyMethod)({ addresses: 'P' }), { code: 'RPC_ERR_INVALID_PARAMS', message: /getbalancehistory is broken on 0.22 nodes: always an error/ })
    await assert.rejects((rpc.getusercontents as AnyMethod)(), { code: 'RPC_ERR_INVALID_PARAMS', message: /getusercontents is a stub that always answers \[\]/ })
    assert.equal(node.callsTo('getbalancehistory').length + node.callsTo('getusercontents').length, 0)
  })

  it('neither caches nor returns an answer of the wrong shape', async (t) => {
    const method = TABLE.gettags as TableMethod
    assert.deepEqual(checkShape('gettags', method, [{ tag: 'a', count: 1 }]), [{ tag: 'a', count: 1 }])
    assert.throws(() => checkShape('gettags', method, { tags: [] }), { code: 'RPC_ERR_TRANSPORT', message: 'Pocketnet node answered gettags with an object, not a list' })
    assert.throws(() => checkShape('getuserstate', TABLE.getuserstate as TableMethod, null), { code: 'RPC_ERR_TRANSPORT', message: /answered getuserstate with a null, not an object/ })
  })

  it('refuses a gap before a filled position when the node would read the gap without a type check', () => {
    const method: TableMethod = {
      category: 'test',
      status: 'ok',
      cacheBlocks: null,
      result: 'array',
      params: [
        { name: 'first', type: 'string', required: true, wire: 'string' },
        { name: 'strict', type: 'string', required: false, wire: 'string' },
        { name: 'later', type: 'integer', required: false, wire: 'integer', fill: null },
      ],
    }
    assert.deepEqual(tableParams('m', method, { first: 'a', strict: 'b', later: 1 }), ['a', 'b', 1])
    assert.throws(() => tableParams('m', method, { first: 'a', later: 1 }), { code: 'RPC_ERR_INVALID_PARAMS', message: /strict must be given when a later param is/ })
  })

  it('caches each method one second per block the node caches it, at most a minute', async () => {
    const { DEFAULT_CACHE_TTL_MS } = await import('../../packages/pocketnet-client/index.js')
    assert.equal(DEFAULT_CACHE_TTL_MS.getcomments, 1000)
    assert.equal(DEFAULT_CACHE_TTL_MS.gettags, 60_000)
    assert.equal(DEFAULT_CACHE_TTL_MS.getstatisticbyhours, 10_000)
    assert.equal(DEFAULT_CACHE_TTL_MS.getuserstate, 1000)
    assert.equal(DEFAULT_CACHE_TTL_MS.getusersubscribers, undefined, 'not cached by the node: not cached by default')
    assert.equal(DEFAULT_CACHE_TTL_MS.search, 30_000, 'the hand-set ones stay')
  })
})
