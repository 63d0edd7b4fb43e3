/**
 * Running out of file descriptors (issue #39): the built service, started with `ulimit -n 256`,
 * flooded with more half-sent requests than it may open descriptors. It used to stop: the
 * overload check's sampler called process.memoryUsage() each second, which reads /proc and threw
 * EMFILE from a timer. Now the server caps its connections below the limit, and a process that
 * runs out all the same (MAX_CONNECTIONS set above it) stays up and answers once they close.
 */
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { listeningUrl, startService, type ServiceProcess } from '../helpers/start-service.js'
import { waitFor } from '../helpers/wait-for.js'

const OPEN_FILES = 256
const FLOOD = 400
// A node URL that nothing listens on: these tests never reach a node.
const NO_NODE = 'http://127.0.0.1:9'
// /proc tells how many descriptors the service holds.
const linuxOnly = { skip: process.platform !== 'linux' && 'reads /proc' }

/** Opens `count` connections, each with a request whose headers never end. */
function halfSentRequests (url: string, count: number, t: { after (fn: () => unknown): void }): Socket[] {
  const { hostname, port } = new URL(url)
  const sockets = Array.from({ length: count }, () => {
    const socket = connect(Number(port), hostname)
    // Refused ones are reset by the service.
    socket.on('error', () => {})
    socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n')
    return socket
  })
  t.after(() => { for (const socket of sockets) socket.destroy() })
  return sockets
}

function descriptorsOf (pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length
}

async function closeAndCheckAlive (service: ServiceProcess, url: string, sockets: Socket[]): Promise<void> {
  for (const socket of sockets) socket.destroy()
  await waitFor('the service to answer /healthz again', async () => {
    const response = await fetch(`${url}/healthz`).catch(() => undefined)
    return response?.status === 200
  })
  assert.equal(service.child.exitCode, null, `the service is still running; stderr: ${service.stderr()}`)
  assert.equal(service.lines.filter(line => line.level as number >= 60).length, 0, 'nothing fatal logged')
}

describe('a flood of connections past the open-file limit', () => {
  it('is refused below the limit, logged once, and the service answers once it ends', linuxOnly, async (t) => {
    const service = startService(t, { POCKETNET_NODES: NO_NODE }, { openFiles: OPEN_FILES })
    const url = await listeningUrl(service)
    const capped = await service.line('the cap', line => line.msg.startsWith('Connections capped at'))
    const maxConnections = capped.maxConnections as number
    assert.ok(maxConnections < OPEN_FILES - 64, `${maxConnections} leaves descriptors for the rest`)

    const sockets = halfSentRequests(url, FLOOD, t)
    const refusing = await service.line('the refusals', line => line.msg.startsWith('Refusing connections'))
    assert.equal(refusing.level, 40)
    await waitFor('the connections past the cap to be closed by the service', () => sockets.filter(socket => socket.closed).length >= FLOOD - maxConnections)
    assert.ok(descriptorsOf(service.child.pid as number) < OPEN_FILES - 32, 'descriptors left for the rest')
    await closeAndCheckAlive(service, url, sockets)
    const again = await service.line('the end of the refusals', line => line.msg.startsWith('Accepting connections again'))
    assert.ok((again.refused as number) >= FLOOD - maxConnections, `${String(again.refused)} refused`)
    assert.equal(service.lines.filter(line => line.msg.startsWith('Refusing connections')).length, 1, 'one line per flood, not per connection')
  })

  it('leaves the service running when it does run out (MAX_CONNECTIONS above the limit)', linuxOnly, async (t) => {
    // MAX_EVENT_LOOP_DELAY_MS at its default: the overload check's sampler runs.
    const service = startService(t, { POCKETNET_NODES: NO_NODE, MAX_CONNECTIONS: '100000' }, { openFiles: OPEN_FILES })
    const url = await listeningUrl(service)
    const sockets = halfSentRequests(url, FLOOD, t)
    await waitFor('the service to run out of descriptors', () => service.child.exitCode !== null || descriptorsOf(service.child.pid as number) >= OPEN_FILES - 1)
    // Out of descriptors for three of the sampler's one-second intervals: the old one threw on
    // its first. (A minimum, not a bound: a slower machine only holds it longer.)
    await sleep(3000)
    assert.equal(service.child.exitCode, null, `the service is still running; stderr: ${service.stderr()}`)
    await closeAndCheckAlive(service, url, sockets)
    const warned = service.lines.find(line => line.msg.startsWith('MAX_CONNECTIONS (100000) leaves fewer than'))
    assert.equal(warned?.level, 40, 'warned at start that the cap is above the limit')
  })
})
