/**
 * `npm run test:contract`: the contract suite (test/contract/) against a real Pocketnet node.
 *
 * - POCKETNET_CONTRACT_NODE set: a regtest node of your own, already running from the same chain
 *   (its public RPC URL; POCKETNET_CONTRACT_RPC its private RPC URL with user and password, for
 *   making blocks; POCKETNET_CONTRACT_DATASET the chain's dataset.json).
 * - else POCKETCOIND_DIR set: a folder holding pocketcoind and the populated chain (docs/real-node.md);
 *   the node is started here once for the whole run, on a fresh copy of the chain in a temporary
 *   folder and free loopback ports, and stopped at the end.
 * - else one line saying how to get a node, and exit 1.
 * Test files given as arguments run alone; by default every file of test/contract/ runs.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const HOW_TO = 'test:contract needs a real Pocketnet node: set POCKETCOIND_DIR to a folder with bin/pocketcoind, start.sh and the regtest chain, or POCKETNET_CONTRACT_NODE to a regtest node of your own (docs/real-node.md)'

interface ContractNode {
  env: Record<string, string>
  stop (): void
}

/** Whether `port` can be listened on at loopback now. */
function isFree (port: number): Promise<boolean> {
  return new Promise(resolve => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A base port whose next four (private RPC, public RPC, WebSocket, secure WebSocket) are free. */
async function freeBase (): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const base = 20_000 + Math.floor(Math.random() * 40_000)
    const free = await Promise.all([1, 2, 3, 4].map(offset => isFree(base + offset)))
    if (free.every(Boolean)) return base
  }
  throw new Error('no five free loopback ports in a row found')
}

async function startNode (dir: string): Promise<ContractNode> {
  const home = resolve(dir)
  const dataDir = mkdtempSync(join(tmpdir(), 'pocketcoind-'))
  const base = await freeBase()
  const started = spawnSync('bash', [join(home, 'start.sh'), dataDir, String(base)], { encoding: 'utf8' })
  if (started.status !== 0) {
    rmSync(dataDir, { recursive: true, force: true })
    throw new Error(`pocketcoind did not start (start.sh exited ${started.status}): ${started.stderr.trim() || started.stdout.trim()}`)
  }
  return {
    env: {
      POCKETNET_CONTRACT_NODE: `http://127.0.0.1:${base + 2}`,
      POCKETNET_CONTRACT_RPC: `http://u:p@127.0.0.1:${base + 1}`,
      POCKETNET_CONTRACT_WS: `ws://127.0.0.1:${base + 3}/ws`,
      POCKETNET_CONTRACT_DATASET: join(home, 'dataset.json'),
    },
    stop () {
      spawnSync(join(home, 'bin', 'pocketcoin-cli'), [`-datadir=${dataDir}`, '-regtest', `-rpcport=${base + 1}`, '-rpcuser=u', '-rpcpassword=p', 'stop'], { stdio: 'ignore' })
      // pocketcoind takes a moment to let go of its files once told to stop.
      for (let i = 0; i < 100 && spawnSync('pgrep', ['-f', dataDir]).status === 0; i++) spawnSync('sleep', ['0.1'])
      spawnSync('pkill', ['-9', '-f', dataDir])
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

async function contractNode (): Promise<ContractNode | undefined> {
  const { POCKETNET_CONTRACT_NODE: own, POCKETCOIND_DIR: dir } = process.env
  if (own) return { env: {}, stop () {} }
  if (dir) return startNode(dir)
  return undefined
}

const node = await contractNode()
if (node === undefined) {
  console.error(HOW_TO)
  process.exit(1)
}
// Files named after `--` run alone (npm run test:contract -- test/contract/wallet.test.ts); by default, every one.
const named = process.argv.slice(2)
const files = named.length > 0 ? named : readdirSync('test/contract').filter(name => name.endsWith('.test.ts')).sort().map(name => join('test/contract', name))
const run = spawn('npx', ['tsx', '--test', '--test-concurrency=1', ...files], {
  stdio: 'inherit',
  env: { ...process.env, ...node.env },
})
const stopAndExit = (code: number): void => {
  node.stop()
  process.exit(code)
}
process.on('SIGINT', () => run.kill('SIGINT'))
run.on('exit', (code, signal) => stopAndExit(code ?? (signal ? 1 : 0)))
