/**
 * `npm run bench:client-size`: what bastyon-miniapp-client adds to a mini-app's page, as a
 * bundler ships it: its public entry bundled into one ES module by esbuild, minified, then
 * gzipped (level 9) and brotli-compressed, against the goal of issue #35 (≤ 8 KB minified and
 * gzipped). Writes its table into bench/results.md, between the client-size markers.
 */
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import { writeResultsSection } from './results-file.js'

const ENTRY = fileURLToPath(new URL('../packages/miniapp-client/src/index.ts', import.meta.url))

async function bundle (minify: boolean): Promise<Buffer> {
  const result = await build({ entryPoints: [ENTRY], bundle: true, format: 'esm', target: 'es2022', minify, write: false, legalComments: 'none' })
  return Buffer.from(result.outputFiles[0]?.contents ?? [])
}

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`
const plain = await bundle(false)
const minified = await bundle(true)
const gzipped = gzipSync(minified, { level: 9 }).length
const brotli = brotliCompressSync(minified).length
const text = [
  `Written by \`npm run bench:client-size\` (Node ${process.version}, ${new Date().toISOString().slice(0, 10)}, esbuild, target ES2022): the package's public entry bundled into one ES module.`,
  '',
  '| Measure | Value | Goal (issue #35) |',
  '|---|---|---|',
  `| bundled, not minified | ${kb(plain.length)} | |`,
  `| minified | ${kb(minified.length)} | |`,
  `| minified and gzipped (level 9) | ${kb(gzipped)} | ≤ 8 KB |`,
  `| minified, brotli | ${kb(brotli)} | |`,
].join('\n')
console.log(`\n${text}\n`)
writeResultsSection('client-size', '### The browser client\'s size (issue #35)\n\nCommand: `npm run bench:client-size`.', text)
