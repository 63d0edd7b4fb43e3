/**
 * `npm run generate:client-types`: the types of bastyon-miniapp-client's answers, written from
 * the service's own response schemas (the ones its OpenAPI document is made of), so that the
 * client's types cannot drift from what the service answers. Writes
 * packages/miniapp-client/src/api-types.ts; test/miniapp-client/api-types.test.ts fails when the
 * file is not what this script would write now.
 *
 * JSON Schema to TypeScript for the subset the schemas use: objects (required and optional
 * properties, open ones as records), arrays, strings with enums, numbers, integers, booleans,
 * null, constants and unions.
 */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { SessionSchema, ChallengeSchema } from '../src/schemas/auth.js'
import { CatalogSchema } from '../src/schemas/catalog.js'
import { MyEntitlementsSchema } from '../src/schemas/entitlements.js'
import { EventPollSchema, EventTicketSchema } from '../src/schemas/events.js'
import { NotificationChannelsSchema } from '../src/schemas/notifications.js'
import { InvoiceSchema, InvoiceTransactionSchema } from '../src/schemas/payments.js'
import { StorageGetSchema, StorageListSchema } from '../src/schemas/storage.js'

export const CLIENT_TYPES_FILE = fileURLToPath(new URL('../packages/miniapp-client/src/api-types.ts', import.meta.url))

interface JsonSchema {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean | JsonSchema
  items?: JsonSchema
  enum?: unknown[]
  const?: unknown
  anyOf?: JsonSchema[]
  description?: string
}

/** The `data` of a route's 200 answer. */
function dataOf (route: { response: Record<number, unknown> }): JsonSchema {
  const data = (route.response[200] as JsonSchema).properties?.data
  if (data === undefined) throw new Error('a route without a 200 data schema')
  return data
}

/** The schema of the items of the list `property` of `data`. */
function itemsOf (data: JsonSchema, property: string): JsonSchema {
  const items = data.properties?.[property]?.items
  if (items === undefined) throw new Error(`no list ${property} in the data schema`)
  return items
}

const NAMED: Array<[string, string, JsonSchema]> = [
  ['Invoice', 'An invoice as `GET /api/payments/invoices/{id}` answers it; amounts in satoshi.', dataOf(InvoiceSchema)],
  ['CheckedTransaction', 'What `POST /api/payments/invoices/{id}/transaction` answers: the invoice, and why the txid was refused if it was.', dataOf(InvoiceTransactionSchema)],
  ['Challenge', 'What `POST /api/auth/challenge` answers.', dataOf(ChallengeSchema)],
  ['Session', 'What `POST /api/auth/session` answers: the session of the user who signed.', dataOf(SessionSchema)],
  ['StreamTicket', 'What `POST /api/events/ticket` answers.', dataOf(EventTicketSchema)],
  ['PolledEvents', 'What `GET /api/events/poll` answers.', dataOf(EventPollSchema)],
  ['Entitlement', 'A SKU the signed-in user holds, as `GET /api/me/entitlements` lists it.', itemsOf(dataOf(MyEntitlementsSchema), 'entitlements')],
  ['CatalogItem', 'An item of the catalogue, as `GET /api/catalog` lists it; its price in satoshi.', itemsOf(dataOf(CatalogSchema), 'items')],
  ['StoredItem', 'A stored value as `GET /api/me/storage/{key}` answers it (its ETag comes in the header).', dataOf(StorageGetSchema)],
  ['StorageListing', 'A page of keys as `GET /api/me/storage` answers it.', dataOf(StorageListSchema)],
  ['NotificationChannel', 'How the signed-in user who opted in is reached, as `GET /api/me/notifications` lists it.', itemsOf(dataOf(NotificationChannelsSchema), 'channels')],
]

const indent = (text: string, by: string): string => text.split('\n').map(line => line === '' ? line : by + line).join('\n')
const comment = (text: string | undefined, by: string): string => text === undefined ? '' : `${by}/** ${text.replaceAll('*/', '*\\/')} */\n`

/** A literal as the repository writes it: strings in single quotes. */
const literal = (value: unknown): string => typeof value === 'string' ? `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'` : JSON.stringify(value)

function typeOf (schema: JsonSchema, top = false): string {
  // A schema that is one of the named ones (the same object) is written by its name.
  const named = top ? undefined : NAMED.find(([, , candidate]) => candidate === schema)
  if (named !== undefined) return named[0]
  if (schema.anyOf !== undefined) return schema.anyOf.map(member => typeOf(member)).join(' | ')
  if (schema.const !== undefined) return literal(schema.const)
  if (schema.enum !== undefined) return schema.enum.map(literal).join(' | ')
  if (Array.isArray(schema.type)) return schema.type.map(type => typeOf({ ...schema, type })).join(' | ')
  switch (schema.type) {
    case 'string': return 'string'
    case 'integer':
    case 'number': return 'number'
    case 'boolean': return 'boolean'
    case 'null': return 'null'
    case 'array': return `Array<${typeOf(schema.items ?? {})}>`
    case 'object': {
      const properties = Object.entries(schema.properties ?? {})
      if (properties.length === 0) return 'Record<string, unknown>'
      const required = new Set(schema.required ?? [])
      const lines = properties.map(([name, property]) => `${comment(property.description, '')}${name}${required.has(name) ? '' : '?'}: ${typeOf(property)}`)
      return `{\n${indent(lines.join('\n'), '  ')}\n}`
    }
    default: return 'unknown'
  }
}

export function clientTypes (): string {
  const header = '// Generated by `npm run generate:client-types` from the service\'s response schemas (src/schemas/): do not edit.\n'
  return header + NAMED.map(([name, what, schema]) => `\n/** ${what} */\nexport type ${name} = ${typeOf(schema, true)}\n`).join('')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(CLIENT_TYPES_FILE, clientTypes())
  console.log(`${CLIENT_TYPES_FILE} written`)
}
