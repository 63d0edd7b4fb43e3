/**
 * The demo's routes that act for the developer (the demo wallet pays, the demo signer signs)
 * answer the demo's own page only: any other web page the developer opens could otherwise use
 * them (issue #39). A request whose `Origin` is not the page's own is refused, and so is a `Host`
 * that is a domain name other than `localhost`, which is how DNS rebinding makes a foreign page
 * same-origin (an IP address cannot be rebound). Programs that send no `Origin`, such as curl,
 * may use them, as they may the emulator's controls.
 */
import { isIP } from 'node:net'
import type { FastifyRequest } from 'fastify'

/** Why `request` may not use the route (`doing`: "the demo wallet pays"), or undefined when it may. */
export function refusalOf (request: FastifyRequest, doing: string): string | undefined {
  // request.host is the Host header (or X-Forwarded-Host behind a trusted proxy), port included.
  const host = request.host
  const hostname = host.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1')
  if (hostname !== 'localhost' && isIP(hostname) === 0) {
    return `${doing} for pages opened at localhost or an IP address, not at ${JSON.stringify(host)}`
  }
  const origin = request.headers.origin
  if (origin !== undefined && origin !== `${request.protocol}://${host}`) {
    return `${doing} for the demo's own page only, not for ${JSON.stringify(origin)}`
  }
  return undefined
}
