/**
 * `npm run generate:rpc`: the typed client's method table, from the node's facts.
 *
 * Reads docs/reference/pocketnet-rpc-methods.json (every public method of pocketnet.core 0.22:
 * positions, the JSON type the node parses at each, defaults, result shape, node cache, status)
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
interface ReferenceMethod { category: string, params: ReferenceParam[], result: string, note: string, cache_blocks: number | null, status: 'ok' | 'broken' | 'stub' | 'testnet-only' }

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

export type Shape = 'array' | 'object' | 'string' | 'none'

/** The top-level shape of a result the table describes in words. */
function shapeOf (result: string): Shape {
  if (/^always an error/i.test(result)) return 'none'
  if (/^(array|always \[\])/i.test(result)) return 'array'
  if (/^(object|explorer tx object)/i.test(result)) return 'object'
  if (/string/i.test(result.split(/[({]/)[0] ?? '')) return 'string'
  return 'object'
}

/** Splits `text` at commas outside brackets. */
function topLevelItems (text: string): string[] {
  const items: string[] = []
  let depth = 0
  let current = ''
  for (const char of text) {
    if ('{[('.includes(char)) depth++
    if ('}])'.includes(char)) depth--
    if (char === ',' && depth === 0) {
      items.push(current.trim())
      current = ''
    } else {
      current += char
    }
  }
  if (current.trim() !== '') items.push(current.trim())
  return items
}

/** The text inside each top-level balanced `{…}` of `text`. */
function allBraces (text: string): string[] {
  const found: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '{' && depth++ === 0) start = i + 1
    if (text[i] === '}' && --depth === 0) found.push(text.slice(start, i))
  }
  return found
}

/** The text inside the first balanced `{…}` of `text`, or undefined. */
function firstBraces (text: string): string | undefined {
  return allBraces(text)[0]
}

/** A field the table names in a result: its name, whether it may be absent, and the JSON kind it gives (`any` when it gives none). */
export interface ResultField {
  name: string
  optional: boolean
  kind: 'list' | 'object' | 'any'
}

/**
 * What the table says a result is: its top-level shape and, for an object or the items of a list,
 * the fields it names (`record` when its keys are data, such as addresses), and whether a list may
 * hold nulls. The generated types are written from it, and the contract suite checks real answers
 * against it.
 */
export interface ResultSchema {
  shape: Shape
  fields?: ResultField[] | 'record'
  /** A list of strings (`getjurymoderators`), not of objects. */
  strings?: boolean
  /** Always `[]`. */
  empty?: boolean
  nullItems?: boolean
  /** A list whose items are of one of these kinds (`array mixing {…} entries … and {…} entries`). */
  variants?: ResultField[][]
  /** A list whose first item is of these fields, and the rest records of any kind (`getmissedinfo`). */
  head?: ResultField[]
}

/** The fields the table names inside `{…}`; `record` for keys that are data. */
function fieldsOf (fields: string): ResultField[] | 'record' {
  const members: ResultField[] = []
  for (const item of topLevelItems(fields)) {
    const match = /^([A-Za-z_$][\w$]*)(\?)?\s*(.*)$/s.exec(item)
    if (match === null) {
      // `{<address>: …}`: keys that are data.
      if (/^</.test(item)) return 'record'
      continue
    }
    const [, name, optional, rest] = match as unknown as [string, string, string | undefined, string]
    if (members.some(member => member.name === name)) continue
    const value = rest.startsWith(':') ? rest.slice(1).trim() : rest
    members.push({ name, optional: optional !== undefined, kind: value.startsWith('[') ? 'list' : value.startsWith('{') ? 'object' : 'any' })
  }
  return members.length === 0 ? 'record' : members
}

export function resultSchema (method: string, result: string): ResultSchema {
  const shape = shapeOf(result)
  if (shape === 'none' || shape === 'string') return { shape }
  const braces = firstBraces(result)
  const fields = braces === undefined ? undefined : fieldsOf(braces)
  if (shape === 'object') return { shape, fields: fields ?? 'record' }
  if (/^always \[\]/i.test(result)) return { shape, empty: true }
  if (method === 'getjurymoderators') return { shape, strings: true }
  if (/^array mixing/i.test(result)) {
    const variants = allBraces(result).map(fieldsOf).filter((each): each is ResultField[] => each !== 'record')
    return { shape, variants }
  }
  if (/^array: first element/i.test(result) && Array.isArray(fields)) return { shape, head: fields }
  // Some lists hold a null for an item the node could not give (a hash that is not content).
  return { shape, ...(fields === undefined ? {} : { fields }), nullItems: /null element|may be null/i.test(result) }
}

const TS_KINDS: Record<ResultField['kind'], string> = { list: 'unknown[]', object: 'Record<string, unknown>', any: 'unknown' }

/** Fields as a TypeScript object type; every type the table does not give is `unknown`. */
function objectType (fields: ResultField[] | 'record'): string {
  if (fields === 'record') return 'Record<string, unknown>'
  return `{ ${fields.map(field => `${field.name}${field.optional ? '?' : ''}: ${TS_KINDS[field.kind]}`).join('; ')} }`
}

function resultType (method: string, reference: ReferenceMethod): string {
  const schema = resultSchema(method, reference.result)
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
 * @throws Error naming the method and position whose type notation or wire the client does not know
 */
export function generate (reference: Reference = readReference()): Record<string, string> {
  const names = Object.keys(reference.methods).sort()
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
        result: shapeOf(method.result),
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
        `export type ${pascal(name)}Result = ${resultType(name, method)}`,
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
        return `- \`${name}({ ${params} })\` → ${shapeOf(method.result)}${status}${typedBy}`
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
