/**
 * `npm run generate:rpc`: the typed client's method table, from the node's facts.
 *
 * Reads docs/reference/pocketnet-rpc-methods.json (every public method of pocketnet.core 0.22:
 * positions, the JSON type the node parses at each, defaults, result shape, node cache, status;
 * all of it as data: the result's shape is each method's `result_shape`, its `result` is words)
 * and writes:
 * - packages/pocketnet-client/methods/table.ts: the table as data (positions, wire types, fill
 *   values, result shape);
 * - packages/pocketnet-client/methods/table-rpc.ts: `TableRpc`, a typed method per usable method,
 *   with result types;
 * - the method list of packages/pocketnet-client/README.md, between its `rpc-methods` markers.
 * A node release is one edit of the JSON and one run of this script;
 * test/pocketnet-client/rpc-table.test.ts fails while the generated files are not current.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const ROOT = new URL('../', import.meta.url)
export const REFERENCE = 'docs/reference/pocketnet-rpc-methods.json'
export const TABLE_FILE = 'packages/pocketnet-client/methods/table.ts'
export const RPC_FILE = 'packages/pocketnet-client/methods/table-rpc.ts'
export const README_FILE = 'packages/pocketnet-client/README.md'
const README_START = '<!-- rpc-methods:start -->'
const README_END = '<!-- rpc-methods:end -->'

/** A position of the reference: how the node reads it, and how the client sends it (stated as data, never inferred from the notes). */
interface ReferenceParam {
  name: string
  type: string
  required: boolean
  default: unknown
  note: string
  wire: Wire
  /** Whether the node reads a null there as absent (a guarded read). */
  reads_null: boolean
  only?: { value: number, why: string }
  wire_before_0_22_1?: Wire
}
/** A method of the reference; `result` is the result in words, `result_shape` the same as data (checked by resultSchema). */
interface ReferenceMethod { category: string, params: ReferenceParam[], result: string, result_shape?: unknown, note: string, cache_blocks: number | null, status: 'ok' | 'broken' | 'stub' | 'testnet-only' }

/** Methods with a hand-written typed wrapper in packages/pocketnet-client/methods/ (richer than the table's); they encode through the table too. */
const HAND_WRITTEN = new Set(['getnodeinfo', 'getuserprofile', 'search'])

/** The TypeScript type a caller passes for each JSON type of the table; a notation not here fails the generation. */
export const TS_TYPES: Record<string, string> = {
  integer: 'number',
  string: 'string',
  'string | string[]': 'string | string[]',
  'integer | string | (integer|string)[]': 'number | string | Array<number | string>',
  any: 'unknown',
  'string[]': 'string[]',
  object: 'Record<string, unknown>',
  boolean: 'boolean',
  'string | integer': 'string | number',
  'string (decimal integer)': 'number',
  'boolean | integer': 'boolean',
  'integer[]': 'number[]',
}

const WIRES = ['integer', 'int64', 'decimal-string', 'string', 'url-encoded', 'url-encoded-list', 'json'] as const
type Wire = typeof WIRES[number]

interface TableParam {
  name: string
  type: string
  required: boolean
  wire: Wire
  /** What is sent in this position when it is empty and a later one is filled; absent: it must be given then. */
  fill?: unknown
}

/** The reference's own facts about a position, checked: a type or wire the client cannot send fails the generation. */
function checked (method: string, param: ReferenceParam): ReferenceParam {
  const where = `${REFERENCE}: ${method}.${param.name}`
  if (!(param.type in TS_TYPES)) throw new Error(`${where}: unknown type notation ${JSON.stringify(param.type)} (add it to TS_TYPES here and to fits() in packages/pocketnet-client/methods/table-spec.ts)`)
  for (const wire of [param.wire, param.wire_before_0_22_1]) {
    if (wire !== undefined && !(WIRES as readonly string[]).includes(wire)) throw new Error(`${where}: unknown wire ${JSON.stringify(wire)}`)
  }
  if (typeof param.reads_null !== 'boolean') throw new Error(`${where}: reads_null must be true or false`)
  return param
}

/** The node's own default when it is a JSON value; undefined when the table describes it in words. */
function literalDefault (value: unknown): { value: unknown } | undefined {
  if (value === null) return undefined
  if (typeof value !== 'string') return { value }
  try {
    return { value: JSON.parse(value) }
  } catch {
    return undefined
  }
}

function fillOf (param: ReferenceParam): { value: unknown } | undefined {
  if (param.name.startsWith('_')) return { value: null }
  const literal = literalDefault(param.default)
  if (literal !== undefined) return literal
  // A guarded read ignores a null and applies its default; an unguarded one fails on it.
  return param.reads_null ? { value: null } : undefined
}

const SHAPES = ['array', 'object', 'string', 'none'] as const
export type Shape = typeof SHAPES[number]
const KINDS = ['list', 'object', 'any'] as const

/** A field the table names in a result: its name, whether it may be absent, and the JSON kind it gives (`any` when it gives none). */
export interface ResultField {
  name: string
  optional: boolean
  kind: typeof KINDS[number]
}

/**
 * What the table says a result is (each method's `result_shape`): its top-level shape and, for an
 * object or the items of a list, the fields it names (`record` when its keys are data, such as
 * addresses), and whether a list may hold nulls. The generated types are written from it, and the
 * contract suite checks real answers against it.
 */
export interface ResultSchema {
  shape: Shape
  fields?: ResultField[] | 'record'
  /** A list of strings (`getjurymoderators`), not of objects. */
  strings?: true
  /** Always `[]`. */
  empty?: true
  nullItems?: true
  /** A list whose items are of one of these kinds (`getpagescores`). */
  variants?: ResultField[][]
  /** A list whose first item is of these fields, and the rest records of any kind (`getmissedinfo`). */
  head?: ResultField[]
}

/** The keys each shape takes besides `shape`. */
const SHAPE_KEYS: Record<Shape, readonly string[]> = {
  none: [],
  string: [],
  object: ['fields'],
  array: ['fields', 'strings', 'empty', 'nullItems', 'variants', 'head'],
}
/** What a list's items are: at most one of these. */
const ITEM_KEYS = ['fields', 'strings', 'empty', 'variants', 'head']

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)
const described = (value: unknown): string => JSON.stringify(value) ?? String(value)

/** A list of fields as the table states it; `record` too where `record` is true. */
function checkedFields (where: string, value: unknown, record: boolean): ResultField[] | 'record' {
  if (record && value === 'record') return value
  if (!Array.isArray(value) || value.length === 0) throw new Error(`${where}: must be a non-empty list of {name, optional, kind}${record ? ' or "record"' : ''}, not ${described(value)}`)
  const names = new Set<string>()
  return value.map((field: unknown, index) => {
    const at = `${where}[${index}]`
    if (!isRecord(field)) throw new Error(`${at}: must be {name, optional, kind}, not ${described(field)}`)
    const unknown = Object.keys(field).filter(key => !['name', 'optional', 'kind'].includes(key))
    if (unknown.length > 0) throw new Error(`${at}: unknown key ${described(unknown[0])} (a field has name, optional, kind)`)
    const { name, optional, kind } = field
    if (typeof name !== 'string' || !/^[A-Za-z_$][\w$]*$/.test(name)) throw new Error(`${at}: name must be an identifier, not ${described(name)}`)
    if (names.has(name)) throw new Error(`${at}: field ${name} is named twice`)
    names.add(name)
    if (typeof optional !== 'boolean') throw new Error(`${at}: optional must be true or false, not ${described(optional)}`)
    if (!(KINDS as readonly unknown[]).includes(kind)) throw new Error(`${at}: unknown kind ${described(kind)} (${KINDS.join(', ')})`)
    return { name, optional, kind: kind as ResultField['kind'] }
  })
}

/**
 * A method's `result_shape` (docs/reference/pocketnet-rpc-methods.json, conventions.result_shape), checked.
 * @throws Error naming the method when it has none, or one with a shape, kind or key the generator does not know
 */
export function resultSchema (method: string, value: unknown): ResultSchema {
  const where = `${REFERENCE}: ${method}.result_shape`
  if (value === undefined) throw new Error(`${REFERENCE}: ${method} has no result_shape (the result's shape as data: see conventions.result_shape)`)
  if (!isRecord(value)) throw new Error(`${where}: must be an object {shape, …}, not ${described(value)}`)
  const { shape } = value
  if (!(SHAPES as readonly unknown[]).includes(shape)) throw new Error(`${where}: unknown shape ${described(shape)} (${SHAPES.join(', ')})`)
  const known = SHAPE_KEYS[shape as Shape]
  const unknown = Object.keys(value).filter(key => key !== 'shape' && !known.includes(key))
  if (unknown.length > 0) throw new Error(`${where}: unknown key ${described(unknown[0])} for shape ${described(shape)}${known.length === 0 ? ' (it takes none)' : ` (it takes ${known.join(', ')})`}`)
  const schema: ResultSchema = { shape: shape as Shape }
  if (shape === 'object') schema.fields = checkedFields(`${where}.fields`, value.fields, true)
  if (shape !== 'array') return schema
  const items = ITEM_KEYS.filter(key => key in value)
  if (items.length > 1) throw new Error(`${where}: ${items.join(' and ')} together (a list's items are one of ${ITEM_KEYS.join(', ')})`)
  for (const flag of ['strings', 'empty', 'nullItems'] as const) {
    if (flag in value && value[flag] !== true) throw new Error(`${where}.${flag}: must be true or left out, not ${described(value[flag])}`)
  }
  if ('nullItems' in value && items.length > 0 && items[0] !== 'fields') throw new Error(`${where}: nullItems with ${items[0]} (only with fields or alone)`)
  if ('fields' in value) schema.fields = checkedFields(`${where}.fields`, value.fields, true)
  if (value.strings === true) schema.strings = true
  if (value.empty === true) schema.empty = true
  if ('variants' in value) {
    const variants = value.variants
    if (!Array.isArray(variants) || variants.length === 0) throw new Error(`${where}.variants: must be a non-empty list of field lists, not ${described(variants)}`)
    schema.variants = variants.map((variant, index) => checkedFields(`${where}.variants[${index}]`, variant, false) as ResultField[])
  }
  if ('head' in value) schema.head = checkedFields(`${where}.head`, value.head, false) as ResultField[]
  if (value.nullItems === true) schema.nullItems = true
  return schema
}

const TS_KINDS: Record<ResultField['kind'], string> = { list: 'unknown[]', object: 'Record<string, unknown>', any: 'unknown' }

/** Fields as a TypeScript object type; every type the table does not give is `unknown`. */
function objectType (fields: ResultField[] | 'record'): string {
  if (fields === 'record') return 'Record<string, unknown>'
  return `{ ${fields.map(field => `${field.name}${field.optional ? '?' : ''}: ${TS_KINDS[field.kind]}`).join('; ')} }`
}

function resultType (schema: ResultSchema): string {
  if (schema.shape === 'none') return 'never'
  if (schema.shape === 'string') return 'string'
  if (schema.shape === 'object') return objectType(schema.fields ?? 'record')
  if (schema.empty === true) return 'never[]'
  if (schema.strings === true) return 'string[]'
  if (schema.variants !== undefined) return `Array<${schema.variants.map(objectType).join(' | ')}>`
  if (schema.head !== undefined) return `[${objectType(schema.head)}, ...Array<Record<string, unknown>>]`
  if (schema.fields === undefined) return 'unknown[]'
  const element = objectType(schema.fields)
  return schema.nullItems === true ? `Array<${element} | null>` : `Array<${element}>`
}

function pascal (name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1)
}

/** A comment line without `*\/`. */
function comment (text: string): string {
  return text.replaceAll('*/', '*\\/').replace(/\s+/g, ' ').trim()
}

/**
 * A note of the table for a caller of the typed client: without the sentences about the node's
 * named params (the client always sends positions).
 */
function callerNote (note: string): string {
  return note.split(/(?<=\.)\s+/).filter(sentence => !/RPCHelpMan|named param/i.test(sentence)).join(' ')
}

/** What the client does with a param on the wire, when it is not sent as given. */
const WIRE_NOTES: Partial<Record<Wire, string>> = {
  'decimal-string': 'A whole number: the client sends it as a decimal string, as the node reads it.',
  'url-encoded': 'The client sends it URL-encoded; the node decodes it.',
  'url-encoded-list': 'The client sends each text URL-encoded; the node decodes them.',
}

function isTyped (name: string, reference: ReferenceMethod): boolean {
  return !HAND_WRITTEN.has(name) && (reference.status === 'ok' || reference.status === 'testnet-only')
}

function tableParams (name: string, reference: ReferenceMethod): TableParam[] {
  return reference.params.map(each => {
    const param = checked(name, each)
    // A required position is always given: it needs no fill.
    const fill = param.required ? undefined : fillOf(param)
    const { only } = param
    return {
      name: param.name,
      type: param.type,
      required: param.required,
      wire: param.wire,
      ...(param.wire_before_0_22_1 === undefined ? {} : { wireBefore0221: param.wire_before_0_22_1 }),
      ...(fill === undefined ? {} : { fill: fill.value }),
      ...(only === undefined ? {} : { only: only.value, why: only.why }),
    }
  })
}

/** The params a caller may give: not the unread `_…` positions. */
function callerParams (name: string, reference: ReferenceMethod): ReferenceParam[] {
  return reference.params.filter(param => !param.name.startsWith('_'))
}

/** The method table as the reference file holds it. */
export interface Reference { source: { release: string }, methods: Record<string, ReferenceMethod> }

export function readReference (): Reference {
  return JSON.parse(readFileSync(new URL(REFERENCE, ROOT), 'utf8')) as Reference
}

/**
 * The generated files' texts, from the reference (the file's, by default).
 * @throws Error naming the method and position whose type notation or wire the client does not know,
 *   or the method whose result_shape is missing or has a shape, kind or key the generator does not know
 */
export function generate (reference: Reference = readReference()): Record<string, string> {
  const names = Object.keys(reference.methods).sort()
  // Every method's result shape, checked before anything is written from it.
  const shapes = new Map(names.map(name => [name, resultSchema(name, (reference.methods[name] as ReferenceMethod).result_shape)]))
  const shapeOf = (name: string): Shape => (shapes.get(name) as ResultSchema).shape
  const header = `// Generated by scripts/generate-rpc.ts from ${REFERENCE} (pocketnet.core ${reference.source.release.split(' ')[0]}): do not edit; run \`npm run generate:rpc\`.`

  const table = [
    header,
    '/* eslint-disable */',
    "import type { TableMethod } from './table-spec.js'",
    '',
    '/** Every public method of the node: positions, wire types, fill values, result shape, node cache (blocks), status. */',
    'export const RPC_TABLE = {',
    ...names.map(name => {
      const method = reference.methods[name] as ReferenceMethod
      return `  ${JSON.stringify(name)}: ${JSON.stringify({
        category: method.category,
        status: method.status,
        cacheBlocks: method.cache_blocks,
        result: shapeOf(name),
        params: tableParams(name, method),
        ...(method.status === 'broken' || method.status === 'stub' ? { why: comment(method.result.startsWith('always') ? method.result : method.note).slice(0, 200) } : {}),
      })},`
    }),
    '} as const satisfies Record<string, TableMethod>',
    '',
    'export type TableMethodName = keyof typeof RPC_TABLE',
    '',
  ].join('\n')

  const typed = names.filter(name => isTyped(name, reference.methods[name] as ReferenceMethod))
  // Methods with the very same params (the feeds) share one interface: the first one's.
  const paramsTypes = new Map<string, string>()
  const rpc = [
    header,
    "import type { CallOptions } from '../client.js'",
    '',
    ...typed.flatMap(name => {
      const method = reference.methods[name] as ReferenceMethod
      const params = callerParams(name, method)
      const fields = params.map(param => {
        const only = param.only
        const doc = [`${param.type}${param.required ? '' : `, default ${String(param.default)}`}.`, only === undefined ? '' : `Only ${only.value}: ${only.why}.`, WIRE_NOTES[param.wire] ?? '', callerNote(param.note)]
        return `  /** ${comment(doc.filter(Boolean).join(' '))} */\n  ${param.name}${param.required ? '' : '?'}: ${only === undefined ? TS_TYPES[param.type] : String(only.value)}`
      })
      const body = fields.join('\n')
      const same = paramsTypes.get(body)
      if (same === undefined) paramsTypes.set(body, `${pascal(name)}Params`)
      return [
        `/** Params of \`${name}\`, by the node's names; the positions come from the table. */`,
        params.length === 0
          ? `export type ${pascal(name)}Params = Record<string, never>`
          : same === undefined ? `export interface ${pascal(name)}Params {\n${body}\n}` : `export type ${pascal(name)}Params = ${same}`,
        `/** ${comment(method.result)} */`,
        `export type ${pascal(name)}Result = ${resultType(shapes.get(name) as ResultSchema)}`,
        '',
      ]
    }),
    '/** A typed method for every usable public method of the node (docs: packages/pocketnet-client/README.md, "Every method"). */',
    'export interface TableRpc {',
    ...typed.map(name => {
      const method = reference.methods[name] as ReferenceMethod
      const optional = callerParams(name, method).every(param => !param.required)
      const notes = [
        comment(callerNote(method.note)),
        method.status === 'testnet-only' ? 'Testnet only.' : '',
        method.cache_blocks === null ? '' : `The node caches it ${method.cache_blocks} block${method.cache_blocks === 1 ? '' : 's'}.`,
      ].filter(Boolean).join(' ')
      return `  /** \`${name}\` (${method.category}). ${notes} */\n  ${name} (params${optional ? '?' : ''}: ${pascal(name)}Params, options?: CallOptions): Promise<${pascal(name)}Result>`
    }),
    '}',
    '',
  ].join('\n')

  const categories = [...new Set(names.map(name => (reference.methods[name] as ReferenceMethod).category))].sort()
  const list = [
    README_START,
    `Generated from the node's method table by \`npm run generate:rpc\` (${names.length} methods of pocketnet.core ${reference.source.release.split(' ')[0]}). Params are by the node's names, \`?\` marks an optional one; \`→\` gives the result's shape. Not callable: *broken* on 0.22 nodes, or a *stub* that always answers \`[]\` (calling one fails at once, saying why).`,
    '',
    ...categories.flatMap(category => [
      `**${category}**`,
      '',
      ...names.filter(name => (reference.methods[name] as ReferenceMethod).category === category).map(name => {
        const method = reference.methods[name] as ReferenceMethod
        const params = callerParams(name, method).map(param => `${param.name}${param.required ? '' : '?'}`).join(', ')
        const status = method.status === 'ok' ? '' : ` — *${method.status}*`
        const typedBy = HAND_WRITTEN.has(name) ? ' (typed by hand, above)' : ''
        return `- \`${name}({ ${params} })\` → ${shapeOf(name)}${status}${typedBy}`
      }),
      '',
    ]),
    README_END,
  ].join('\n')
  const readme = readFileSync(new URL(README_FILE, ROOT), 'utf8')
  const start = readme.indexOf(README_START)
  const end = readme.indexOf(README_END)
  if (start < 0 || end < start) throw new Error(`${README_FILE} has no ${README_START} … ${README_END} markers`)
  return {
    [TABLE_FILE]: table,
    [RPC_FILE]: rpc,
    [README_FILE]: readme.slice(0, start) + list + readme.slice(end + README_END.length),
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [path, text] of Object.entries(generate())) writeFileSync(new URL(path, ROOT), text)
  console.log(`wrote ${TABLE_FILE}, ${RPC_FILE} and the method list of ${README_FILE}`)
}
