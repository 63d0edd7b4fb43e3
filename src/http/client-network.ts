/**
 * The groups a client's rate-limit key (an IPv4 address, an IPv6 /64: rate-limit.ts) falls in,
 * for what is shared out per client. Whoever has one IPv6 /64 usually has the 65,536 of the /48
 * around it, so counting IPv6 clients by their /64 would let one of them take 65,536 shares.
 */
import { normalizeIP } from '@fastify/rate-limit'

/** The network of a rate-limit key: an IPv4 address's /24, an IPv6 /64's /48 (sign-in's check budget). */
export function networkOf (client: string): string {
  if (client.includes(':')) return `${normalizeIP(client, 48)}/48`
  const lastDot = client.lastIndexOf('.')
  return lastDot < 0 ? client : `${client.slice(0, lastDot)}.0/24`
}

/**
 * Who a per-client cap counts against (event streams, waiting long-polls): an IPv4 address
 * alone, since many users may share a /24 behind their provider's addresses, and an IPv6 client
 * by its /48.
 */
export function capHolderOf (client: string): string {
  return client.includes(':') ? networkOf(client) : client
}
