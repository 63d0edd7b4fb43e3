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

/** A gap in an excerpt: any number of the file's lines stand there. */
const GAP = /^\s*(\/\/|#)\s*…\s*$/

/**
 * Whether `block` is an excerpt of `text`: its lines, but the gaps, are lines of the text (their
 * indentation ignored), in the same order, consecutive except across a gap. Lines a reader adds
 * to the file as a guide asks (an import, a `register`) keep it an excerpt.
 */
function isExcerptOf (block: string, text: string): boolean {
  const lines = text.split('\n').map(line => line.trim())
  let at = 0
  let gapBefore = true
  for (const wanted of block.split('\n')) {
    if (GAP.test(wanted)) {
      gapBefore = true
      continue
    }
    const found = lines.indexOf(wanted.trim(), at)
    if (found < 0 || (!gapBefore && found !== at)) return false
    at = found + 1
    gapBefore = false
  }
  return true
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
    const cited = /(?<![\w@./-])((?:src|packages|test|bench|devnode|deploy|docs|public|scripts)\/[\w./-]*\.(?:ts|md|js|yaml|json|css|html))\b/g
    const missing: string[] = []
    for (const path of tracked.filter(file => /\.(md|ts)$/.test(file))) {
      for (const [, cite] of read(path).matchAll(cited)) {
        // A compiled name (`packages/pocketnet-client/index.js` in an import) stands for its TypeScript source.
        // A path of the project the scaffold writes (examples/premium-article), as the guide, the
        // example's README and the scaffold's name them, is one of the example's files.
        const candidates = [cite as string, (cite as string).replace(/\.js$/, '.ts'), `src/${cite as string}`, `examples/premium-article/${cite as string}`]
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

  it('shows excerpts of files whose lines are in the files, in order, and stay so as a guide is followed', () => {
    let checked = 0
    for (const path of markdown) {
      for (const [, file, block] of read(path).matchAll(/<!-- excerpt: (\S+) -->\n```\w*\n([\s\S]*?)\n```/g)) {
        assert.ok(isExcerptOf(block as string, read(file as string)), `${path}: the excerpt of ${file} is out of date`)
        checked++
      }
    }
    assert.ok(checked >= 1, `${checked} excerpts checked`)
    // docs/adding-a-route.md, step 4, followed: one more import and one more register.
    const mount = read('docs/adding-a-route.md').match(/<!-- excerpt: src\/routes\/api\/index\.ts -->\n```\w*\n([\s\S]*?)\n```/)?.[1] as string
    const followed = read('src/routes/api/index.ts')
      .replace("import postRoute from './post.js'\n", "import postRoute from './post.js'\nimport txRoute from './tx.js'\n")
      .replace('  await api.register(postRoute)\n', '  await api.register(postRoute)\n  await api.register(txRoute)\n')
    assert.ok(followed.includes('txRoute)'))
    assert.equal(isExcerptOf(mount, followed), true, 'the guide followed keeps its excerpt true')
    // Lines out of order, or one the file lacks, are caught.
    assert.equal(isExcerptOf("import postRoute from './post.js'\nimport authRoutes from './auth.js'", read('src/routes/api/index.ts')), false)
    assert.equal(isExcerptOf('  await api.register(gone)', read('src/routes/api/index.ts')), false)
  })
})
