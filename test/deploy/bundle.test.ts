/**
 * The build's bundle step (scripts/bundle.ts) on small projects of its own: a module that finds
 * files next to itself must not be bundled silently, where it would look in dist/ instead. The
 * service's real bundle is what the production, cluster and shutdown tests run.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, it } from 'node:test'
import { BUNDLE, bundleService } from '../../scripts/bundle.js'

/** A project whose built entry imports one package, `some-package`, with `source` as its index. */
function project (t: { after (fn: () => unknown): void }, source: string): string {
  const root = mkdtempSync(join(tmpdir(), 'bundle-'))
  t.after(() => rmSync(root, { recursive: true, force: true }))
  const files: Record<string, string> = {
    'package.json': '{ "type": "module" }',
    'dist/src/server.js': "import { answer } from 'some-package'\nconsole.log(answer())\n",
    'node_modules/some-package/package.json': '{ "name": "some-package", "main": "index.js" }',
    'node_modules/some-package/index.js': source,
  }
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

describe('the bundle step', () => {
  it('bundles a package that does not look for its own files, CommonJS requires of Node modules included', async (t) => {
    const root = project(t, "const { sep } = require('node:path')\nexports.answer = () => 'ok' + sep\n")
    await bundleService(root, {})
    rmSync(join(root, 'node_modules'), { recursive: true })
    assert.equal(execFileSync(process.execPath, [BUNDLE], { cwd: root, encoding: 'utf8' }), 'ok/\n', 'it runs without node_modules')
    assert.ok(existsSync(join(root, `${BUNDLE}.map`)), 'with its source map')
  })

  it('refuses a package that finds files next to itself, naming it, and leaves no bundle behind', async (t) => {
    const root = project(t, "const { join } = require('node:path')\nexports.answer = () => join(__dirname, 'data.bin')\n")
    await assert.rejects(bundleService(root, {}), (err: Error) => {
      assert.match(err.message, /node_modules\/some-package\/index\.js names its own location/)
      return true
    })
    assert.equal(existsSync(join(root, BUNDLE)), false)
  })

  it('bundles such a package once it is listed with its reason, and refuses a listed module that no longer needs it', async (t) => {
    const root = project(t, 'exports.answer = () => typeof __dirname\n')
    await bundleService(root, { 'node_modules/some-package/index.js': 'a test of the list' })
    assert.ok(existsSync(join(root, BUNDLE)))

    await assert.rejects(bundleService(root, { 'node_modules/some-package/index.js': 'a test', 'node_modules/gone/index.js': 'stale' }), /node_modules\/gone\/index\.js is in LOCATION_SAFE but no longer bundled/)
  })
})
