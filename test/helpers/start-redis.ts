/**
 * A real redis-server (Debian's `redis-server`, which .ci/run installs) on a free loopback port,
 * with nothing saved to disk, stopped when the test ends. `kill()` and `restart()` take it away
 * and bring it back on the same port, for tests of what happens while Redis is gone.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { connect } from 'node:net'
import { freePort } from './free-port.js'

type WithAfter = { after (fn: () => unknown): void }

export interface TestRedis {
  /** redis://127.0.0.1:<port> */
  url: string
  port: number
  /** Stops the server at once (SIGKILL), as a crash would. */
  kill (): Promise<void>
  /** Starts it again on the same port, empty. */
  restart (): Promise<void>
  /** Freezes the server (SIGSTOP): connections stay open and nothing answers, as with a stalled host. */
  pause (): void
  /** Lets a paused server go on (SIGCONT). */
  resume (): void
}

/** Resolves once the port accepts connections and answers PING. */
async function untilAnswers (port: number, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`)
    const answered = await new Promise<boolean>(resolve => {
      const socket = connect(port, '127.0.0.1')
      socket.once('error', () => resolve(false))
      socket.once('connect', () => socket.write('PING\r\n'))
      socket.once('data', data => { socket.destroy(); resolve(data.toString().startsWith('+PONG')) })
    })
    if (answered) return
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  throw new Error('redis-server did not answer PING')
}

export async function startRedis (t: WithAfter): Promise<TestRedis> {
  let port = await freePort()
  let child: ChildProcess | undefined
  const start = async (): Promise<void> => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
    child.once('error', () => {})
    await untilAnswers(port, child)
  }
  const kill = async (): Promise<void> => {
    const running = child
    child = undefined
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return
    const exited = once(running, 'exit')
    running.kill('SIGKILL')
    await exited
  }
  // A port found free can be taken by another test's server before redis-server binds it (the
  // suite starts many at once): then it exits at once, and another port is tried.
  for (let attempt = 1; ; attempt++) {
    try {
      await start()
      break
    } catch (err) {
      if (attempt === 5 || child?.exitCode === null) throw err
      port = await freePort()
    }
  }
  t.after(kill)
  t.after(() => child?.kill('SIGCONT'))
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    restart: start,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
  }
}
