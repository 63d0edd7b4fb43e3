/**
 * The catalogue (CATALOG_FILE): what an app sells without writing server code, each item a SKU at
 * a price in satoshi, for good or for a number of seconds. Read and checked once at start: each
 * problem is one line of a ConfigError naming the item and the rule, so that a typo stops the
 * start rather than a sale. docs/entitlements.md, "A catalogue", shows the format.
 */
import { readFileSync } from 'node:fs'
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'
import { ConfigError } from '../config.js'
import { INVOICE_LIMITS } from '../payments/invoice-store.js'
import { ENTITLEMENT_LIMITS, SKU_PATTERN } from './entitlement.js'

const MAX_ITEMS = 1000

const CatalogItemSchema = Type.Object({
  sku: Type.String({ pattern: SKU_PATTERN.source, description: "1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or a digit" }),
  title: Type.String({ minLength: 1, maxLength: 200, description: 'a text of 1 to 200 characters' }),
  description: Type.Optional(Type.String({ maxLength: 2000, description: 'a text of at most 2000 characters' })),
  priceSat: Type.Integer({ minimum: 1, maximum: INVOICE_LIMITS.maxAmountSat, description: `a whole number of satoshi from 1 to ${INVOICE_LIMITS.maxAmountSat} (1 PKOIN = 100000000)` }),
  durationS: Type.Optional(Type.Integer({ minimum: 1, maximum: ENTITLEMENT_LIMITS.maxDurationS, description: `a whole number of seconds from 1 to ${ENTITLEMENT_LIMITS.maxDurationS}, or absent for good` })),
}, { additionalProperties: false })

const CatalogFileSchema = Type.Object({
  items: Type.Array(CatalogItemSchema, { maxItems: MAX_ITEMS }),
}, { additionalProperties: false })

/** One thing the app sells. */
export type CatalogItem = Static<typeof CatalogItemSchema>

const FIELDS = Object.keys(CatalogItemSchema.properties)

export class Catalog {
  readonly items: readonly CatalogItem[]
  readonly #bySku: ReadonlyMap<string, CatalogItem>

  constructor (items: readonly CatalogItem[]) {
    this.items = items
    this.#bySku = new Map(items.map(item => [item.sku, item]))
  }

  get (sku: string): CatalogItem | undefined {
    return this.#bySku.get(sku)
  }
}

/** `/items/2/priceSat` → `items[2].priceSat`. */
function pathOf (instancePath: string): string {
  return instancePath.slice(1).split('/').map((part, index) => (index === 0 ? part : /^\d+$/.test(part) ? `[${part}]` : `.${part}`)).join('')
}

/** The rule the value at `instancePath` breaks, as its schema describes it. */
function ruleOf (instancePath: string): string | undefined {
  const field = /^\/items\/\d+\/([A-Za-z]+)$/.exec(instancePath)?.[1]
  return field === undefined ? undefined : (CatalogItemSchema.properties as Record<string, { description?: string }>)[field]?.description
}

function valueAt (document: unknown, instancePath: string): unknown {
  return instancePath.slice(1).split('/').reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], document)
}

/** Each problem of `document`, one line each: the schema's, then SKUs sold twice. */
export function catalogProblems (document: unknown): string[] {
  const problems: string[] = []
  for (const error of Value.Errors(CatalogFileSchema, document)) {
    const at = pathOf(error.instancePath)
    const where = at === '' ? 'the file' : at
    // additionalProperties: false reports each unknown field twice; the list below says it once.
    if (error.keyword === 'boolean') continue
    if (error.keyword === 'additionalProperties') {
      const unknown = (error.params as { additionalProperties?: string[] }).additionalProperties ?? []
      problems.push(`${where} has ${unknown.map(name => JSON.stringify(name)).join(', ')}, which ${unknown.length === 1 ? 'is' : 'are'} not ${at === '' ? 'a field of the file: it has "items" only' : `a field of an item: ${FIELDS.join(', ')}`}`)
    } else if (error.keyword === 'required') {
      const missing = (error.params as { requiredProperties?: string[] }).requiredProperties ?? []
      problems.push(`${where} lacks ${missing.join(', ')}`)
    } else {
      const rule = ruleOf(error.instancePath)
      const got = JSON.stringify(valueAt(document, error.instancePath))
      problems.push(rule === undefined ? `${where} ${error.message}` : `${where} must be ${rule} (got ${got === undefined ? 'nothing' : got.slice(0, 80)})`)
    }
  }
  if (problems.length === 0) {
    const first = new Map<string, number>()
    ;(document as Static<typeof CatalogFileSchema>).items.forEach((item, index) => {
      const earlier = first.get(item.sku)
      if (earlier === undefined) first.set(item.sku, index)
      else problems.push(`items[${index}].sku ${JSON.stringify(item.sku)} is items[${earlier}]'s too: each SKU is sold once`)
    })
  }
  return problems
}

/**
 * Reads and checks the catalogue file.
 * @throws ConfigError with one line per problem, each naming CATALOG_FILE
 */
export function loadCatalog (path: string): Catalog {
  const fail = (problems: string[]): never => { throw new ConfigError(problems.map(problem => `CATALOG_FILE (${path}): ${problem}`)) }
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    return fail([`cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`])
  }
  let document: unknown
  try {
    document = JSON.parse(text)
  } catch (err) {
    return fail([`is not JSON: ${(err as Error).message}`])
  }
  const problems = catalogProblems(document)
  if (problems.length > 0) fail(problems)
  return new Catalog((document as Static<typeof CatalogFileSchema>).items)
}
