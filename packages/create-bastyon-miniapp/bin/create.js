#!/usr/bin/env node
/**
 * `npm create bastyon-miniapp <dir>`: a paid mini-app to start from (a premium article: the
 * server, its page, a test that pays on an emulated chain, and `npm run dev`), written into
 * <dir>. `--packages <folder>` takes this project's packages from the tarballs in <folder>
 * (`npm pack --workspaces` of a clone) instead of the registry.
 */
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const TEMPLATE = fileURLToPath(new URL('../template/', import.meta.url))
const USAGE = 'Usage: npm create bastyon-miniapp <dir> [-- --packages <folder of .tgz>]'

function fail (message) {
  console.error(`${message}\n${USAGE}`)
  process.exit(1)
}

let parsed
try {
  parsed = parseArgs({ allowPositionals: true, options: { packages: { type: 'string' }, help: { type: 'boolean', short: 'h' } } })
} catch (error) {
  fail(error.message)
}
if (parsed.values.help) {
  console.log(USAGE)
  process.exit(0)
}
const [dir, ...extra] = parsed.positionals
if (dir === undefined || extra.length > 0) fail('Name one directory to create.')
const target = resolve(dir)
if (existsSync(target) && readdirSync(target).length > 0) fail(`${target} exists and is not empty.`)

const manifest = JSON.parse(readFileSync(join(TEMPLATE, 'package.json'), 'utf8'))
manifest.name = basename(target).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+/, '') || 'mini-app'
if (parsed.values.packages !== undefined) {
  // Each of our packages from its tarball, as `npm pack` names it: <name>-<version>.tgz.
  const folder = resolve(parsed.values.packages)
  const tarballs = existsSync(folder) ? readdirSync(folder).filter(file => file.endsWith('.tgz')) : []
  for (const field of ['dependencies', 'devDependencies']) {
    for (const name of Object.keys(manifest[field] ?? {})) {
      const tarball = tarballs.find(file => file === `${name}-${manifest[field][name].replace(/^\^/, '')}.tgz`)
      if (tarball !== undefined) manifest[field][name] = `file:${join(folder, tarball)}`
      else if (name.startsWith('bastyon-miniapp-') || name === 'pocketnet-client') fail(`No tarball of ${name} in ${folder}.`)
    }
  }
  // pocketnet-client, the server's own dependency, is not on the registry either: the project
  // depends on its tarball, which then stands for the server's.
  const rpcClient = tarballs.find(file => /^pocketnet-client-.*\.tgz$/.test(file))
  if (rpcClient !== undefined) manifest.dependencies['pocketnet-client'] = `file:${join(folder, rpcClient)}`
}

// The template's own files: never a node_modules or data folder an example run left in it.
cpSync(TEMPLATE, target, { recursive: true, filter: source => !/(^|[/\\])(node_modules|data)([/\\]|$)/.test(relative(TEMPLATE, source)) })
writeFileSync(join(target, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
writeFileSync(join(target, '.gitignore'), 'node_modules\ndata\n')
console.log(`A mini-app in ${target}. Next:
  cd ${dir}
  npm install
  npm test          # pays for the article on an emulated chain
  npm run dev       # the page at http://127.0.0.1:3000/?signer=reader, on an emulated node`)
