/**
 * Which response headers a recording may keep. An allow-list, not a deny-list: a header that
 * is not known to be the same for every request of a URL (one a hook sets per request, a
 * Set-Cookie, anything new) keeps the response from being recorded at all, so Fastify answers
 * every such request and the header is always made anew.
 */

/** The same for every request of a URL and answer: kept in the recording and replayed. */
export const REPLAYED_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  // http/http-cache.ts
  'cache-control', 'etag',
  // CORS (per Origin, which Vary names) and Vary itself
  'vary', 'access-control-allow-origin', 'access-control-allow-credentials', 'access-control-expose-headers',
  // plugins/external/helmet.ts: computed once at start
  'content-security-policy', 'cross-origin-opener-policy', 'cross-origin-resource-policy', 'origin-agent-cluster',
  'referrer-policy', 'strict-transport-security', 'x-content-type-options', 'x-dns-prefetch-control',
  'x-download-options', 'x-frame-options', 'x-permitted-cross-domain-policies', 'x-xss-protection',
])

/** Made anew for each answer, by the fast path (request id, rate limit) or by node:http: not kept. */
export const PER_ANSWER_HEADERS: ReadonlySet<string> = new Set([
  'x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset',
  'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding',
])
