/** A loopback port free now, for a server a test starts as a process of its own (Redis, PostgreSQL). */
import { once } from 'node:events'
import { createServer } from 'node:net'

export async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}
