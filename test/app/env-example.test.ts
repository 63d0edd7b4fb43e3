import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import { ConfigSchema } from '../../src/config.js'

const root = new URL('../../', import.meta.url)

describe('configuration documents', () => {
  it('list every variable of the config schema in .env.example and the README', async () => {
    const example = await readFile(new URL('.env.example', root), 'utf8')
    const readme = await readFile(new URL('README.md', root), 'utf8')
    const listed = [...example.matchAll(/^([A-Z_]+)=/gm)].map(match => match[1])
    assert.deepEqual(listed.sort(), Object.keys(ConfigSchema.properties).sort())
    for (const name of Object.keys(ConfigSchema.properties)) assert.match(readme, new RegExp(`\\| \`${name}\` \\|`), name)
  })
})
