/**
 * A benchmark's table in bench/results.md, between its markers (`<!-- name:start -->` and
 * `<!-- name:end -->`): replaced there when the markers are found, else appended under `heading`.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const RESULTS = fileURLToPath(new URL('./results.md', import.meta.url))

export function writeResultsSection (name: string, heading: string, text: string): void {
  const results = readFileSync(RESULTS, 'utf8')
  const [start, end] = [`<!-- ${name}:start -->`, `<!-- ${name}:end -->`]
  const section = `${start}\n${text}\n${end}`
  writeFileSync(RESULTS, results.includes(start) && results.includes(end)
    ? results.slice(0, results.indexOf(start)) + section + results.slice(results.indexOf(end) + end.length)
    : `${results.trimEnd()}\n\n${heading}\n\n${section}\n`)
  console.log('bench/results.md updated')
}
