/**
 * `npm test` and `npm run test:quick`.
 *
 * - `npm test`: lint, type check, the build and every test with coverage (of the code the test
 *   processes run themselves: test/helpers/coverage-of-this-process.ts), then the coverage check
 *   (lines ≥ 90 % on packages/pocketnet-client/ and src/: .c8rc.json); a failed check fails the
 *   run, but the tests still run, so that one run says everything that is wrong.
 * - `npm run test:quick`: lint, type check and the unit tests (test/pocketnet-client, without the
 *   package test, which packs and installs), without coverage: the loop while changing code.
 *
 * Test files run in a few processes (PROCESSES: a process pays for loading the service once, not
 * once per file), one per core and more while the machine idles (LANES), beside lint, the type
 * check and the build; each one's output is printed when it ends, with its time. A file run alone
 * (`npx tsx --test test/routes/user.test.ts`) works as before.
 *
 * What the suite needs from Debian (chromium-headless-shell, redis-server, postgresql) is checked
 * first, with one line per missing package.
 */
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dirname, '..')
const quick = process.argv.includes('--quick')
/**
 * Test processes at once: one per core (TEST_LANES sets another count). A group that waits (on a
 * browser, a timer, a process it started) leaves its core idle: while the machine has been idle
 * a good share of the last moments, one more starts, up to EXTRA_LANES more. A fixed third lane
 * cost more than it saved: with three processes on two cores each takes longer and its polls and
 * idle servers cost CPU the longer they run (bench/results.md, "Test suite").
 */
const LANES = lanes(process.env.TEST_LANES)
const EXTRA_LANES = 2
/**
 * The idle share of the machine over the last SAMPLE_MS above which one more process starts. At
 * 0.3 the machine idled in stretches of 10 to 30 % that never reached it (bench/results.md, "The
 * suite, third round").
 */
const IDLE_SHARE = 0.15
const SAMPLE_MS = 1000
/**
 * The test processes, in the order they start, the longest first; each runs its files one after
 * another. A process pays seconds of CPU to load tsx and the service before its first test, and
 * the suite is bound by this machine's two cores, so folders share processes (bench/results.md,
 * "Test suite"). An entry is a folder or a file (without `.test.ts`); a file goes to the entry
 * that names it, else to its folder's, else to the last process.
 */
const PROCESSES = [
  // The full-disk tests mostly wait on the processes they fill a disk under.
  ['app/cluster', 'db/full-disk'],
  // One Chromium for every page.
  ['e2e'],
  // The built service and the payments', storage's, notifications' and payouts' crash tests, run as processes.
  ['app/shutdown', 'deploy', 'payments/service-crash', 'payments/crash', 'storage/storage-crash', 'notifications/notification-crash', 'payouts/payout-crash'],
  // The packed packages, installed into empty projects, and the project the scaffold writes.
  ['create-miniapp', 'pocketnet-client/package', 'miniapp-client/package', 'miniapp-server/package', 'miniapp-testkit/package'],
  ['db', 'lease', 'docs', 'fast-path', 'metrics', 'rate-limit', 'resilience', 'scale-out'],
  ['events', 'routes', 'devnode', 'pocketnet-client'],
  // The demo as a process (its embedded database made anew) beside the payments' own, and the
  // outbox's, storage's, notifications' and payouts', on the PostgreSQL server the payments' tests start.
  ['payments', 'outbox', 'storage', 'notifications', 'payouts', 'deploy/demo', 'examples'],
  ['http', 'auth', 'app', 'miniapp-client', 'miniapp-server', 'miniapp-testkit'],
]
/** Folders that are not part of `npm test`: the contract suite needs a real node (npm run test:contract). */
const NOT_HERE = new Set(['contract', 'helpers', 'fixtures'])
const GROUPS_DIR = join(ROOT, 'test', '.groups')
/**
 * No group takes nearly this long; one that does is stuck. The packages' group takes about 190 s
 * here, and a machine twice as slow, or this one shared, must still pass.
 */
const HANG_AFTER_MS = 600_000
const COVERAGE_DIR = join(ROOT, 'coverage', 'tmp')

/** Free space a memory file system needs for the run's temporary files (data directories, a packed install, browser profiles). */
const MEMORY_TMP_MIN_BYTES = 2 * 1024 ** 3

function lanes (value: string | undefined): number {
  if (value === undefined) return availableParallelism()
  const count = Number(value)
  if (Number.isInteger(count) && count >= 1) return count
  console.error(`TEST_LANES must be a whole number from 1 (got ${JSON.stringify(value)})`)
  process.exit(1)
}

interface Group { name: string, files: string[] }
interface Outcome { name: string, code: number, output: string, seconds: number, startedAt: number, passed: number, failed: number, cpuSeconds: number | undefined }

function bin (name: string): string {
  return join(ROOT, 'node_modules', '.bin', name)
}

/** eslint over `targets`, with a cache of its own for each set of files (they would overwrite one shared). */
function lint (name: string, targets: string[]): () => Promise<Outcome> {
  const cache = join(ROOT, 'node_modules', '.cache', 'eslint', name.replaceAll(' ', '-'))
  return () => runQuietly(name, bin('eslint'), [...targets, '--cache', '--cache-strategy', 'content', '--cache-location', `${cache}/`])
}

/** Runs `command`, its output kept for when it ends. */
function runQuietly (name: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Outcome> {
  const started = performance.now()
  return new Promise(resolve => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    // A hang becomes a failure that names the group, not a run that never ends.
    const guard = setTimeout(() => {
      output += `\n# ${name} still running after ${HANG_AFTER_MS / 1000} s: killed\n`
      child.kill('SIGKILL')
    }, HANG_AFTER_MS)
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    child.on('close', (code, signal) => {
      clearTimeout(guard)
      const cpuSeconds = childrenCpuTaken()
      const count = (word: string): number => Number(new RegExp(`^# ${word} (\\d+)$`, 'm').exec(output)?.[1] ?? 0)
      resolve({ name, code: code ?? (signal ? 1 : 0), output, seconds: (performance.now() - started) / 1000, startedAt: started / 1000, passed: count('pass'), failed: count('fail'), cpuSeconds })
    })
  })
}

/**
 * CPU-seconds of the children reaped since the last call (undefined off Linux): read when a child
 * ends, it is that child's and its own waited-for children's (a test process's servers it
 * stopped), not a daemon's it left running (Chromium's helpers, PostgreSQL's server).
 */
let childrenCpu = childrenCpuSeconds()
function childrenCpuTaken (): number | undefined {
  const now = childrenCpuSeconds()
  const taken = now === undefined || childrenCpu === undefined ? undefined : now - childrenCpu
  childrenCpu = now
  return taken
}

/** This process's reaped children's user and system CPU-seconds (cutime, cstime of /proc/self/stat). */
function childrenCpuSeconds (): number | undefined {
  try {
    // The fields after the command's closing parenthesis: cutime and cstime are the 14th and 15th.
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[13]) + Number(fields[14])) / 100
  } catch {
    return undefined
  }
}

/**
 * Runs `jobs` in order, `lanes` at a time and one more while the machine sits idle (above),
 * printing each one's output as it ends.
 */
async function inLanes (jobs: Array<() => Promise<Outcome>>, lanes: number): Promise<Outcome[]> {
  const outcomes: Outcome[] = []
  const running = new Set<Promise<void>>()
  const start = (job: () => Promise<Outcome>): void => {
    const run = job().then(outcome => {
      process.stdout.write(outcome.output)
      console.log(`# ${outcome.name}: ${outcome.code === 0 ? 'ok' : 'FAILED'} in ${outcome.seconds.toFixed(1)} s`)
      outcomes.push(outcome)
      running.delete(run)
    })
    running.add(run)
  }
  const idle = idleShare()
  let next = 0
  while (next < jobs.length) {
    const wanted = running.size < lanes || (running.size < lanes + EXTRA_LANES && idle.since() > IDLE_SHARE)
    if (wanted) {
      start(jobs[next++] as () => Promise<Outcome>)
      // The new process's own start is not idleness: it is judged over a whole sample from here.
      idle.restart()
      continue
    }
    await Promise.race([...running, new Promise(resolve => setTimeout(resolve, SAMPLE_MS / 4))])
    idle.advance()
  }
  await Promise.all(running)
  return outcomes
}

/**
 * The machine's idle share (from /proc/stat) over the last SAMPLE_MS or so; 0 where there is no
 * /proc/stat, which leaves the lanes fixed.
 */
function idleShare (): { since (): number, advance (): void, restart (): void } {
  let samples: Array<{ at: number, idle: number, total: number }> = []
  const read = (): void => {
    const counts = cpuCounts()
    if (counts !== undefined) samples.push({ at: performance.now(), ...counts })
    // The oldest sample kept is the newest one at least SAMPLE_MS old.
    while (samples.length > 2 && (samples[1] as { at: number }).at <= performance.now() - SAMPLE_MS) samples.shift()
  }
  read()
  return {
    since () {
      const first = samples[0]
      const last = samples.at(-1)
      if (first === undefined || last === undefined || last.at - first.at < SAMPLE_MS || last.total === first.total) return 0
      return (last.idle - first.idle) / (last.total - first.total)
    },
    advance: read,
    restart () {
      samples = []
      read()
    },
  }
}
/** One line per Debian package the suite needs and this machine lacks. */
function missingPackages (): string[] {
  const has = (command: string): boolean => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0
  const missing: string[] = []
  if (!has('redis-server')) missing.push('redis-server (the scale-out, sign-in and rate-limit tests start one): apt-get install redis-server')
  if (process.env.CHROMIUM_PATH === undefined && !has('chromium-headless-shell')) missing.push('chromium-headless-shell (the demo page is tested in it): apt-get install chromium-headless-shell')
  const debianPostgres = existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').some(version => existsSync(join('/usr/lib/postgresql', version, 'bin', 'initdb')))
  if (process.env.POSTGRES_BIN_DIR === undefined && !has('initdb') && !debianPostgres) missing.push('postgresql (the payments tests start a server of their own): apt-get install postgresql')
  return missing
}

function testGroups (): Group[] {
  // The quick loop: the unit tests of pocketnet-client, without what runs processes (the package test packs and installs).
  const folders = quick
    ? ['pocketnet-client']
    : readdirSync(join(ROOT, 'test'), { withFileTypes: true })
      .filter(entry => entry.isDirectory() && !entry.name.startsWith('.') && !NOT_HERE.has(entry.name))
      .map(entry => entry.name)
  const groups = PROCESSES.map(() => ({ name: '', files: [] as string[] }))
  // A group is named after the entries its files came by (a folder no entry names, by itself).
  const names = PROCESSES.map(() => new Set<string>())
  const processOf = (name: string): number => PROCESSES.findIndex(entries => entries.includes(name))
  for (const folder of folders.sort()) {
    // A folder's files, its subfolders' included (test/pocketnet-client/events/…).
    const files = (readdirSync(join(ROOT, 'test', folder), { recursive: true }) as string[])
      .filter(name => name.endsWith('.test.ts')).sort().map(name => `${folder}/${name}`)
    for (const file of files) {
      const name = file.replace(/\.test\.ts$/, '')
      if (quick && name === 'pocketnet-client/package') continue
      const byFile = processOf(name)
      const byFolder = processOf(folder)
      const index = byFile >= 0 ? byFile : byFolder >= 0 ? byFolder : groups.length - 1
      groups[index]?.files.push(file)
      names[index]?.add(byFile >= 0 ? name : folder)
    }
  }
  for (const [index, group] of groups.entries()) {
    const came = names[index] as Set<string>
    const entries = PROCESSES[index] as string[]
    group.name = [...entries.filter(entry => came.has(entry)), ...[...came].filter(entry => !entries.includes(entry))].join('+')
  }
  return groups.filter(group => group.files.length > 0)
}

/** An entry file that imports the group's files, for `node --test` to run in one process. */
function entryOf (group: Group): string {
  const entry = join(GROUPS_DIR, `${group.name.replaceAll(/[/+]/g, '-')}.test.ts`)
  const first = [...(coverage ? ["import '../helpers/coverage-of-this-process.ts'\n"] : []), "import '../helpers/release-hooks.ts'\n"]
  writeFileSync(entry, [...first, ...group.files.map(file => `import '../${file}'\n`)].join(''))
  return entry
}

const missing = quick ? [] : missingPackages()
if (missing.length > 0) {
  for (const line of missing) console.error(`npm test needs ${line}`)
  process.exit(1)
}

/**
 * The run's temporary files in memory (/dev/shm, when it is a file system with room), removed at
 * the end. The tests make thousands of files there (database data directories, a PostgreSQL
 * cluster, an npm install, browser profiles), and creating and removing a file on this machine's
 * ext4 costs many times what it does in memory (bench/results.md, "Test suite"). What lasts from
 * run to run (the embedded database template) is in node_modules/.cache (scripts/pglite-template.ts).
 */
function memoryTmp (): string | undefined {
  try {
    const { bavail, bsize } = statfsSync('/dev/shm')
    if (bavail * bsize < MEMORY_TMP_MIN_BYTES) return undefined
    const dir = mkdtempSync('/dev/shm/bastyon-test-')
    // Open to all as /tmp is (and sticky): run as root, the PostgreSQL tests start the server as postgres.
    chmodSync(dir, 0o1777)
    return dir
  } catch {
    return undefined
  }
}

/**
 * CPU-seconds this machine has been busy (every process's, from /proc/stat; undefined off Linux):
 * what the run costs, Chromium's and PostgreSQL's processes included, which no child's own
 * resource usage shows, since the test processes do not wait for them all.
 */
function machineBusySeconds (): number | undefined {
  const ticks = cpuTicks()
  if (ticks === undefined) return undefined
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = ticks
  // USER_HZ: 100 on every Linux a Node.js build targets.
  return (user + nice + system + irq + softirq) / 100
}

/** The machine's CPU time so far by kind (user, nice, system, idle, iowait, irq, softirq), in USER_HZ ticks; undefined off Linux. */
function cpuTicks (): number[] | undefined {
  try {
    return readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 8).map(Number)
  } catch {
    return undefined
  }
}

/** The machine's idle and total CPU time so far, in USER_HZ ticks (undefined off Linux). */
function cpuCounts (): { idle: number, total: number } | undefined {
  const ticks = cpuTicks()
  if (ticks === undefined) return undefined
  const [, , , idle = 0, iowait = 0] = ticks
  return { idle: idle + iowait, total: ticks.reduce((sum, tick) => sum + tick, 0) }
}

const busyAtStart = machineBusySeconds()
rmSync(GROUPS_DIR, { recursive: true, force: true })
mkdirSync(GROUPS_DIR, { recursive: true })
const runTmp = memoryTmp()
if (runTmp !== undefined) process.env.TMPDIR = runTmp
const coverage = !quick
const env = coverage ? { ...process.env, NODE_V8_COVERAGE: COVERAGE_DIR } : process.env
if (coverage) rmSync(join(ROOT, 'coverage'), { recursive: true, force: true })
const test = (group: Group) => () => runQuietly(group.name, process.execPath, ['--import', 'tsx', '--test', entryOf(group)], env)
const groups = testGroups().map(test)
// One queue for the checks and the tests. The build goes first, since the process tests wait for
// it (test/helpers/built.ts); the test processes next, the longest first; lint and the type check
// last, where their CPU alone fills the lanes the last test processes leave.
const outcomes = await inLanes([
  // The build, and the embedded database the payments tests copy (scripts/pglite-template.ts).
  ...(quick ? [] : [() => runQuietly('build', process.execPath, ['--import', 'tsx', '--input-type=module', '-e', "const template = import('./scripts/pglite-template.ts').then(m => m.pgliteTemplate()); await import('./test/helpers/built.ts').then(m => m.ensureBuilt()); await template"])]),
  ...groups,
  // Each keeps what it learnt in node_modules/.cache, so that a run after a change checks what
  // the change touched (eslint by file content; tsc by its build info) rather than everything.
  // eslint in two processes, the tests and the rest, about half the code each: one alone was the
  // last to end, with the other core idle (bench/results.md, "The suite, third round").
  lint('lint test', ['test']),
  lint('lint', ['.', '--ignore-pattern', 'test/']),
  // In one thread: the suite keeps every core busy with processes already, and tsc's own threads
  // then cost more CPU than they save (bench/results.md, "The suite, third round").
  () => runQuietly('typecheck', process.execPath, [join(ROOT, 'node_modules', 'typescript-native', 'bin', 'tsc'), '--noEmit', '--singleThreaded', '--incremental', '--tsBuildInfoFile', join(ROOT, 'node_modules', '.cache', 'tsc', 'typecheck.tsbuildinfo')]),
], LANES)
rmSync(GROUPS_DIR, { recursive: true, force: true })
if (runTmp !== undefined) rmSync(runTmp, { recursive: true, force: true })

const passed = outcomes.reduce((sum, outcome) => sum + outcome.passed, 0)
const failed = outcomes.reduce((sum, outcome) => sum + outcome.failed, 0)
const broken = outcomes.filter(outcome => outcome.code !== 0)
console.log('\n# checks and groups, slowest first:')
for (const outcome of [...outcomes].sort((a, b) => b.seconds - a.seconds)) console.log(`#   ${outcome.name.padEnd(22)} ${outcome.seconds.toFixed(1).padStart(5)} s (from ${outcome.startedAt.toFixed(0).padStart(3)} s)${outcome.cpuSeconds === undefined ? '' : `, ${outcome.cpuSeconds.toFixed(0).padStart(3)} CPU-s`}  ${outcome.passed} passed${outcome.failed ? `, ${outcome.failed} failed` : ''}`)
if (broken.length > 0) console.log(`# failed: ${broken.map(outcome => outcome.name).join(', ')}`)

let covered = true
if (coverage) {
  const report = spawnSync(bin('c8'), ['report', '--temp-directory', COVERAGE_DIR, '--check-coverage'], { cwd: ROOT, stdio: 'inherit' })
  covered = report.status === 0
}
const busyAtEnd = machineBusySeconds()
if (busyAtStart !== undefined && busyAtEnd !== undefined) console.log(`# ${(performance.now() / 1000).toFixed(0)} s, this machine busy ${(busyAtEnd - busyAtStart).toFixed(0)} CPU-seconds (every process's)`)
console.log(`${passed} passed, ${failed} failed`)
process.exit(broken.length === 0 && failed === 0 && covered ? 0 : 1)
