/**
 * Every typed method of the client (pocketnet-client) against the real node, called through the
 * client (so with its encoding) with valid params from the dataset (method-params.ts): the node
 * accepts the encoding, and the answer has the shape the node's method table states as data, which
 * the generated result types are written from (each method's `result_shape`, checked by
 * scripts/generate-rpc.ts resultSchema): the top-level JSON type, and for an object or each item
 * of a list, every field the table does not mark optional, lists and objects where it says so. Where the real node contradicts the table, the
 * table is fixed (docs/reference/pocketnet-rpc-methods.json, then `npm run generate:rpc`) and the
 * fact written in docs/pocketnet-node.md.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { PocketNetProxyApi, RPC_TABLE, RpcNodeError } from '../../packages/pocketnet-client/index.js'
import { readReference, resultSchema, type ResultSchema } from '../../scripts/generate-rpc.js'
import { contractNode, publicRpc } from './contract-node.js'
import { paramsFor, type ChainFacts } from './method-params.js'

const reference = readReference()

/** Typed by hand and checked by the routes' contract test; and the methods that write to the chain. */
const NOT_HERE = new Set(['getnodeinfo', 'getuserprofile', 'search', 'generateaddress', 'generatetransaction', 'generatepocketnettransaction'])
/** RPC errors that say the node could not read what it was sent: an encoding the table got wrong. */
const ENCODING_ERRORS = new Set([-1, -3, -8, -32602, -32603])

const methods = Object.entries(RPC_TABLE)
  .filter(([name, method]) => (method.status === 'ok' || method.status === 'testnet-only') && !NOT_HERE.has(name))

/** Why `value` is not of `schema`, or undefined when it is. */
export function misfit (schema: ResultSchema, value: unknown): string | undefined {
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value
  if (schema.shape === 'string') return kind === 'string' ? undefined : `a ${kind}, not a string`
  if (schema.shape === 'object') return kind === 'object' ? fieldsMisfit(schema.fields, value as Record<string, unknown>) : `a ${kind}, not an object`
  if (kind !== 'array') return `a ${kind}, not a list`
  const items = value as unknown[]
  if (schema.empty === true) return items.length === 0 ? undefined : `${items.length} items where the table says always []`
  for (const [index, item] of items.entries()) {
    if (item === null && schema.nullItems === true) continue
    const wrong = schema.strings === true
      ? (typeof item === 'string' ? undefined : `not a string: ${JSON.stringify(item)}`)
      : (isObject(item) ? itemMisfit(schema, index, item) : `not an object: ${JSON.stringify(item)?.slice(0, 80)}`)
    if (wrong !== undefined) return `item ${index}: ${wrong}`
  }
  return undefined
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/** Why an object item of a list is not what the table says: the head's fields, one variant's, or the items' own. */
function itemMisfit (schema: ResultSchema, index: number, item: Record<string, unknown>): string | undefined {
  if (schema.head !== undefined) return index === 0 ? fieldsMisfit(schema.head, item) : undefined
  if (schema.variants !== undefined) {
    const misfits = schema.variants.map(variant => fieldsMisfit(variant, item))
    return misfits.includes(undefined) ? undefined : misfits.join('; nor ')
  }
  return fieldsMisfit(schema.fields, item)
}

function fieldsMisfit (fields: ResultSchema['fields'], object: Record<string, unknown>): string | undefined {
  if (fields === undefined || fields === 'record') return undefined
  // `{}` for an unknown key is documented for the object answers that have it.
  if (Object.keys(object).length === 0) return undefined
  for (const field of fields) {
    const value = object[field.name]
    if (value === undefined) {
      if (!field.optional) return `no field ${field.name} (has ${Object.keys(object).join(', ')})`
      continue
    }
    if (field.kind === 'list' && value !== null && !Array.isArray(value)) return `${field.name} is ${JSON.stringify(value)?.slice(0, 80)}, not a list`
    if (field.kind === 'object' && (value === null || typeof value !== 'object' || Array.isArray(value))) return `${field.name} is ${JSON.stringify(value)?.slice(0, 80)}, not an object`
  }
  return undefined
}

/** Whether an answer has anything in it to check, beyond its top-level type. */
const hasContent = (value: unknown): boolean =>
  Array.isArray(value) ? value.length > 0 : value !== null && typeof value === 'object' ? Object.keys(value).length > 0 : typeof value === 'string'

describe('every typed method against a real node', () => {
  let api: PocketNetProxyApi
  let facts: ChainFacts
  const checkedWithContent: string[] = []

  before(async () => {
    api = await PocketNetProxyApi.create({ nodes: [contractNode.url], network: 'regtest', hedging: false, cache: { ttlMs: {} } })
    const { dataset } = contractNode
    const comment = await publicRpc('getrawtransaction', [dataset.accounts[0]?.comments[0]])
    const tip = await publicRpc('getnodeinfo')
    facts = { dataset, commentBlock: { height: comment.result.height, hash: comment.result.blockHash }, tipHash: tip.result.lastblock.hash }
  })
  after(async () => {
    await api.close()
    console.log(`# ${checkedWithContent.length} of ${methods.length} methods answered with content to check: ${checkedWithContent.join(', ')}`)
  })

  for (const [name, method] of methods) {
    it(name, async () => {
      const params = paramsFor(name, method.params.filter(param => param.required).map(param => param.name), facts)
      const call = (api.rpc as unknown as Record<string, (params: unknown) => Promise<unknown>>)[name] as (params: unknown) => Promise<unknown>
      let answer: unknown
      try {
        answer = await call(params)
      } catch (err) {
        if (err instanceof RpcNodeError && ENCODING_ERRORS.has(err.rpcCode)) {
          assert.fail(`${name}(${JSON.stringify(params)}): the node refused it with RPC error ${err.rpcCode}: ${err.rpcMessage}`)
        }
        throw err
      }
      const schema = resultSchema(name, reference.methods[name]?.result_shape)
      const wrong = misfit(schema, answer)
      assert.equal(wrong, undefined, `${name}: the answer is ${wrong}\n${JSON.stringify(answer)?.slice(0, 600)}`)
      if (hasContent(answer)) checkedWithContent.push(name)
    })
  }
})
