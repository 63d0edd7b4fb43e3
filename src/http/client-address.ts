/**
 * The client's address as Fastify's `request.ip` computes it: the socket's peer, or with
 * TRUST_PROXY the nearest address in X-Forwarded-For that is not a trusted proxy. One function
 * for the rate limit in Fastify and on the fast path, so both count a client under one key.
 */
import type { IncomingMessage } from 'node:http'
import proxyAddr from '@fastify/proxy-addr'

/** TRUST_PROXY as Fastify's `trustProxy` option takes it. */
export type TrustProxy = boolean | string[]

export function parseTrustProxy (value: string): TrustProxy {
  if (value === '' || value === 'false') return false
  if (value === 'true') return true
  return value.split(',').map(item => item.trim()).filter(Boolean)
}

export function clientAddressResolver (trust: TrustProxy): (request: IncomingMessage) => string {
  if (trust === false) return request => request.socket.remoteAddress ?? ''
  const trusted = trust === true ? () => true : proxyAddr.compile(trust)
  return request => proxyAddr(request, trusted)
}
