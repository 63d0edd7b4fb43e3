import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'

const ROOT = new URL('../../', import.meta.url).pathname
const tracked = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(path => path !== '' && existsSync(join(ROOT, path)))
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8')
const markdown = tracked.filter(path => path.endsWith('.md'))

/** Removes the indentation common to every non-empty line. */
function dedent (text: string): string {
  const lines = text.replace(/\s+$/, '').split('\n')
  const indent = Math.min(...lines.filter(line => line.trim() !== '').map(line => /^ */.exec(line)?.[0].length ?? 0))
  return lines.map(line => line.slice(indent)).join('\n')
}

/** The lines between `// docs:<name>:start` and `// docs:<name>:end` in `path`. */
function region (path: string, name: string): string {
  const text = read(path)
  const start = text.indexOf(`// docs:${name}:start\n`)
  const end = text.indexOf(`// docs:${name}:end`)
  assert.ok(start >= 0 && end > start, `${path} has the region ${name}`)
  return dedent(text.slice(text.indexOf('\n', start) + 1, text.lastIndexOf('\n', end)))
}

describe('the documentation', () => {
  it('cites no path outside the repository', () => {
    const outside = /(\.\.\/)?shared\/(pocketnet|spec|style|hooks)|\.\.\/shared\b/
    // .ci/run may name the real node beside the repository (docs/real-node.md), and nothing else.
    const NODE_BESIDE = ['shared', 'pocketnet-node'].join('/')
    const offenders = tracked.filter(path => path !== 'package-lock.json' && outside.test(path === '.ci/run' ? read(path).replaceAll(NODE_BESIDE, '') : read(path)))
    assert.deepEqual(offenders, [])
  })

  it('names only files that exist', () => {
    // A path of the repository, not the tail of a longer one (`node_modules/x/lib/y.js`).
    const cited = /(?<![\w@./-])((?:src|lib|test|bench|devnode|deploy|docs|public|scripts)\/[\w./-]*\.(?:ts|md|js|yaml|json|css|html))\b/g
    const missing: string[] = []
    for (const path of tracked.filter(file => /\.(md|ts)$/.test(file))) {
      for (const [, cite] of read(path).matchAll(cited)) {
        // A compiled name (`lib/index.js` in an import) stands for its TypeScript source.
        const candidates = [cite as string, (cite as string).replace(/\.js$/, '.ts'), `src/${cite as string}`]
        if (!candidates.some(candidate => existsSync(join(ROOT, candidate)))) missing.push(`${path}: ${cite}`)
      }
    }
    assert.deepEqual(missing, [])
  })

  it('shows the code of the worked example as the files hold it', () => {
    let checked = 0
    for (const path of markdown) {
      for (const [, source, block] of read(path).matchAll(/<!-- file: (\S+) -->\n```\w*\n([\s\S]*?)\n```/g)) {
        const [file, name] = (source as string).split('#') as [string, string | undefined]
        const expected = name === undefined ? read(file).trimEnd() : region(file, name)
        assert.equal(dedent(block as string), dedent(expected), `${path}: the block from ${source} is out of date`)
        checked++
      }
    }
    assert.ok(checked >= 4, `${checked} blocks checked`)
  })
})
