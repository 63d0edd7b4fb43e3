/**
 * The configuration's two documents, .env.example and the README's table, against the config
 * schema they describe: every variable once in each, with the schema's default.
 */
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import { DEFAULT_NODES } from 'pocketnet-client'
import { ConfigSchema } from '../../src/config.js'

const root = new URL('../../', import.meta.url)
const names = Object.keys(ConfigSchema.properties)
const defaultOf = (name: string): string => String((ConfigSchema.properties as Record<string, { default?: unknown }>)[name]?.default ?? '')

describe('configuration documents', () => {
  it('list every variable of the config schema once in .env.example, set to its default or left unset', async () => {
    const example = await readFile(new URL('.env.example', root), 'utf8')
    const lines = [...example.matchAll(/^(# )?([A-Z][A-Z0-9_]*)=(.*)$/gm)].map(([, unset, name, value]) => ({ unset: unset !== undefined, name: name as string, value }))
    assert.deepEqual(lines.map(line => line.name).sort(), [...names].sort())
    for (const line of lines.filter(line => !line.unset)) assert.equal(line.value, defaultOf(line.name), `${line.name} in .env.example`)
  })

  it('list every variable in the README\'s table with its default', async () => {
    const readme = await readFile(new URL('README.md', root), 'utf8')
    // The words the table uses where a default has none of its own to show.
    const inWords: Record<string, string> = { POCKETNET_NODES: 'ten public nodes' }
    assert.equal(DEFAULT_NODES.length, 10)
    for (const name of names) {
      const cell = new RegExp(`^\\| \`${name}\` \\| ([^|]*) \\|`, 'm').exec(readme)?.[1]
      assert.ok(cell !== undefined, `${name} is in the README's table`)
      const expected = inWords[name] ?? (defaultOf(name) === '' ? 'empty' : `\`${defaultOf(name)}\``)
      assert.equal(cell.replace(/ \(.*\)$/, ''), expected, name)
    }
  })
})
