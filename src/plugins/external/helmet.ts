/**
 * Security headers from helmet. None of ours varies per request (no CSP nonces), so helmet
 * computes the set once at start and each answer copies it: helmet's per-request middleware
 * was a measurable share of the hot path's CPU (bench/results.md, "Findings").
 *
 * HTML pages (the demo, the docs) get the full set: a CSP for the demo page (its own scripts
 * and styles, avatars and post images from any https host) and no X-Frame-Options, since
 * mini-apps run in Bastyon's iframe. The docs page keeps the CSP @fastify/swagger-ui sets for it.
 * Every other answer (JSON, scripts, styles) gets the few headers that matter for an API. The
 * set follows what the answer is, not its URL, so a new route needs no entry anywhere; a static
 * file's 304, which does not say what it is, gets none and keeps the set of the answer it renews.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import helmet, { type HelmetOptions } from 'helmet'
import { mirroredByReplay } from '../../fast-path/hook-ledger.js'

const PAGE_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: {
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:', 'https:'],
      connectSrc: ["'self'"],
      frameAncestors: ['*'],
      // The service often runs on plain http behind a proxy, or on localhost: no forced upgrade.
      upgradeInsecureRequests: null,
    },
  },
  frameguard: false,
  crossOriginResourcePolicy: { policy: 'cross-origin' },
}

/** The security headers of every JSON answer. */
export const API_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; frame-ancestors *",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'cross-origin',
}

/** The headers helmet would set, captured from one run of its middleware. */
function headersOf (options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {}
  const response = {
    setHeader (name: string, value: string) { headers[name.toLowerCase()] = value },
    removeHeader (name: string) { delete headers[name.toLowerCase()] },
  }
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, () => {})
  return headers
}

export default fp(async (app) => {
  const pageHeaders = Object.entries(headersOf(PAGE_OPTIONS))
  const apiHeaders = Object.entries(API_HEADERS)
  // The same headers for every answer of a kind: the fast path replays them as recorded.
  app.addHook('onSend', mirroredByReplay<onSendHookHandler>(function securityHeaders (_request, reply, payload, done) {
    const type = reply.getHeader('content-type')
    // A static file's 304 has no Content-Type (send leaves it out), and a browser stores the
    // headers of a 304 over those of the answer it keeps: the API's set would replace the page's
    // CSP and block the page's own scripts on a reload. So it carries neither.
    if (type === undefined && reply.statusCode === 304) return done(null, payload)
    const headers = typeof type === 'string' && type.startsWith('text/html') ? pageHeaders : apiHeaders
    for (const [name, value] of headers) {
      if (!reply.hasHeader(name)) reply.header(name, value)
    }
    done(null, payload)
  }))
}, { name: 'helmet' })
