/**
 * `npm run bench:start`: what a process of the service spends to start, bundled (dist/server.js,
 * what `npm start` runs) against the same build as separate modules (dist/src/server.js), in one
 * run, alternating, so that the machine's noise falls on both alike. Per start: the time from
 * the spawn to listening, the CPU the process spent by then and its resident memory then.
 */
import { execFileSync } from 'node:child_process'
import { START_ARGS } from './harness.js'
import { measureStart, type Start } from './startup.js'

const RUNS = Number(process.env.BENCH_START_RUNS ?? 15)
const FLAGS = START_ARGS.slice(0, -1)
const ENTRIES = { bundle: 'dist/server.js', modules: 'dist/src/server.js' }
// No node answers: a start does not wait for one.
const ENV = { NODE_ENV: 'production', POCKETNET_NODES: 'http://127.0.0.1:9' }

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

execFileSync('npm', ['run', 'build'], { stdio: 'inherit' })
const starts: Record<keyof typeof ENTRIES, Start[]> = { bundle: [], modules: [] }
for (let run = 0; run < RUNS; run++) {
  for (const [name, entry] of Object.entries(ENTRIES) as Array<[keyof typeof ENTRIES, string]>) {
    starts[name].push(await measureStart(ENV, [...FLAGS, entry]))
  }
}
const row = (name: keyof typeof ENTRIES): string => {
  const of = (key: keyof Start): string => median(starts[name].map(start => start[key])).toFixed(0)
  return `| ${name} (\`${ENTRIES[name]}\`) | ${of('ms')} | ${of('cpuMs')} | ${of('rssMb')} |`
}
const ratio = (key: keyof Start): string => (median(starts.bundle.map(start => start[key])) / median(starts.modules.map(start => start[key]))).toFixed(2)
console.log(`Medians of ${RUNS} starts each, alternating:\n
| entry | ms to listening | CPU ms | RSS MB |
|---|---|---|---|
${row('bundle')}
${row('modules')}
| bundle / modules | ${ratio('ms')}× | ${ratio('cpuMs')}× | ${ratio('rssMb')}× |`)
