/**
 * examples/premium-article in the suite: its own tests (which the scaffold writes into every new
 * project) run here as they are, and the size the issue promises a paid mini-app takes: at most
 * 40 lines of server code and 40 of front-end.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import '../../examples/premium-article/test/article.test.js'

const EXAMPLE = new URL('../../examples/premium-article/', import.meta.url)
/** Lines of code: the catalogue's entries (`['why-pkoin', {…}],`) are content, which a guide adds to. */
const linesOf = (file: string): number => readFileSync(new URL(file, EXAMPLE), 'utf8').trimEnd().split('\n').filter(line => !/^\s*\['[\w-]+', \{.*\}\],$/.test(line)).length

describe('the premium-article example', () => {
  it('takes at most 40 lines of server code and 40 of front-end', () => {
    assert.ok(linesOf('server.js') <= 40, `server.js: ${linesOf('server.js')} lines`)
    assert.ok(linesOf('public/app.js') <= 40, `public/app.js: ${linesOf('public/app.js')} lines`)
  })
})
