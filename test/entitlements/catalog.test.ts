/**
 * The catalogue file, checked at start: one line per problem, naming the item, the field and the
 * rule; and the configuration it needs (payments and sign-in on).
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { ConfigError, loadConfig } from '../../src/config.js'
import { catalogProblems, loadCatalog } from '../../src/entitlements/catalog.js'
import { startApp } from '../helpers/build-app.js'
import { APP_ID } from '../helpers/sign-in.js'
import { startEmulator } from '../helpers/start-emulator.js'

type WithAfter = { after (fn: () => unknown): void }

function fileWith (t: WithAfter, text: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'catalog-'))
  t.after(() => rmSync(folder, { recursive: true, force: true }))
  const path = join(folder, 'catalog.json')
  writeFileSync(path, text)
  return path
}

const ITEM = { sku: 'premium', title: 'Premium', priceSat: 100_000_000 }

describe('the catalogue file', () => {
  it('loads the items, each found by its SKU', (t) => {
    const catalog = loadCatalog(fileWith(t, JSON.stringify({ items: [ITEM, { sku: 'pro.monthly', title: 'Pro', description: 'A month', priceSat: 1, durationS: 2_592_000 }] })))
    assert.deepEqual(catalog.items.map(item => item.sku), ['premium', 'pro.monthly'])
    assert.deepEqual(catalog.get('pro.monthly'), { sku: 'pro.monthly', title: 'Pro', description: 'A month', priceSat: 1, durationS: 2_592_000 })
    assert.equal(catalog.get('gold'), undefined)
    assert.deepEqual(loadCatalog(fileWith(t, '{"items": []}')).items, [], 'an empty catalogue sells nothing')
  })

  it('says each problem on a line of its own, naming the item, the field and the rule', () => {
    assert.deepEqual(catalogProblems({
      items: [
        { sku: 'Premium', title: '', priceSat: 1.5, durationS: 0 },
        { sku: 'ok', title: 'Fine', priceSat: 3_355_443_200_000_000 },
        { title: 'No SKU', price: 5 },
      ],
    }), [
      'items[0].sku must be 1 to 64 lowercase letters, digits, \'.\', \'_\' or \'-\', starting with a letter or a digit (got "Premium")',
      'items[0].title must be a text of 1 to 200 characters (got "")',
      'items[0].priceSat must be a whole number of satoshi from 1 to 3355443199999999 (1 PKOIN = 100000000) (got 1.5)',
      'items[0].durationS must be a whole number of seconds from 1 to 315360000, or absent for good (got 0)',
      'items[1].priceSat must be a whole number of satoshi from 1 to 3355443199999999 (1 PKOIN = 100000000) (got 3355443200000000)',
      'items[2] lacks sku, priceSat',
      'items[2] has "price", which is not a field of an item: sku, title, description, priceSat, durationS',
    ])
    assert.deepEqual(catalogProblems({ items: [ITEM, { ...ITEM, title: 'Again' }, ITEM] }), [
      'items[1].sku "premium" is items[0]\'s too: each SKU is sold once',
      'items[2].sku "premium" is items[0]\'s too: each SKU is sold once',
    ])
    assert.deepEqual(catalogProblems({ products: [] }), ['the file lacks items', 'the file has "products", which is not a field of the file: it has "items" only'])
    assert.deepEqual(catalogProblems([]), ['the file must be object'])
  })

  it('refuses a file it cannot read or parse, naming CATALOG_FILE', (t) => {
    const missing = join(tmpdir(), 'no-such-catalog.json')
    assert.throws(() => loadCatalog(missing), (err: unknown) => err instanceof ConfigError && err.problems.length === 1 && err.problems[0] === `CATALOG_FILE (${missing}): cannot be read: ENOENT`)
    const broken = fileWith(t, '{"items": [')
    assert.throws(() => loadCatalog(broken), (err: unknown) => err instanceof ConfigError && /^CATALOG_FILE \(.*\): is not JSON: /.test(err.problems[0] ?? ''))
    const bad = fileWith(t, JSON.stringify({ items: [{ ...ITEM, priceSat: 0 }, { ...ITEM, sku: 'x', durationS: -1 }] }))
    assert.throws(() => loadCatalog(bad), (err: unknown) => err instanceof ConfigError && err.problems.length === 2 && err.problems.every(line => line.startsWith(`CATALOG_FILE (${bad}): items[`)))
  })

  it('needs payments and sign-in on', () => {
    const lines = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env)
      } catch (err) {
        if (err instanceof ConfigError) return err.problems
        throw err
      }
      return []
    }
    assert.deepEqual(lines({ CATALOG_FILE: 'catalog.json' }), ['CATALOG_FILE needs PAYMENT_ADDRESS: the catalogue\'s items are bought with invoices paid to it'])
    assert.deepEqual(lines({ CATALOG_FILE: 'catalog.json', PAYMENT_ADDRESS: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX' }), ['CATALOG_FILE needs BASTYON_APP_ID: an item is granted to the signed-in user who buys it'])
    assert.deepEqual(lines({ CATALOG_FILE: 'catalog.json', PAYMENT_ADDRESS: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX', BASTYON_APP_ID: APP_ID }), [])
  })

  it('stops the start of the service on a bad file, with its lines', async (t) => {
    const node = await startEmulator(t)
    const receiver = node.dataset.users[1]?.address as string
    const bad = fileWith(t, JSON.stringify({ items: [{ ...ITEM, priceSat: 'ten' }] }))
    await assert.rejects(startApp(t, { nodes: [node.url], env: { PAYMENT_ADDRESS: receiver, BASTYON_APP_ID: APP_ID, CATALOG_FILE: bad, DATA_DIR: join(tmpdir(), 'unused-catalog-data') } }), (err: unknown) =>
      err instanceof ConfigError && err.message.includes(`CATALOG_FILE (${bad}): items[0].priceSat must be a whole number of satoshi`))
  })
})
