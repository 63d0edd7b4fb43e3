/**
 * What a route says about itself, in its Fastify `config`; the hooks that apply a policy read
 * it from `request.routeOptions.config`, so no URL table anywhere lists routes.
 *
 * ```ts
 * app.get('/post/:hash', {
 *   schema: PostSchema,
 *   config: { failureMessage: 'Failed to retrieve post', maxAgeMs: 60_000, replay: true },
 * }, handler)
 * ```
 * `rateLimit` is @fastify/rate-limit's own: `false` exempts a route (probes, metrics, docs), an
 * object gives it limits of its own.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The spec's fixed `message` when the handler fails (the RPC call or the client's creation):
     * 500 `{message, error}` with the error's own text. Without it, a failure is the general
     * `Internal server error`. See http/error-handler.ts.
     */
    failureMessage?: string
    /**
     * `Cache-Control: public, max-age` of a 200 answer to GET (http/http-cache.ts); 0 gives
     * `no-cache`. Without it, every answer is `no-store`. Match it to how long the client keeps
     * the node's answer, so that browsers and the service agree.
     */
    maxAgeMs?: number
    /**
     * The fast path may answer repeats of this GET with the recorded response, before Fastify:
     * only for an answer that is the same for every caller of the URL (no user, no cookie, no
     * header other than those in `Vary`). Refused at start-up on a route with hooks of its own
     * or marked `auth`. See docs/fast-path.md.
     */
    replay?: boolean
    /**
     * Who may call the route (auth/plugin.ts). `true`: a signed-in user only, 401 for anyone
     * else. `'optional'`: anyone; `request.user` is the caller when credentials came and null
     * when none did, and credentials that came but do not hold (a malformed or unknown token, a
     * bad signature) are a 401 as on `true`. Either way the answer depends on the caller: such
     * a route is never replayed, and an answer to a signed-in caller is never stored by a cache.
     */
    auth?: boolean | 'optional'
    /**
     * An operators' route (auth/admin-token.ts): `true` answers only `Authorization: Bearer
     * <ADMIN_TOKEN>` (401 otherwise, with a stable code), and 404 while ADMIN_TOKEN is empty.
     * Never replayed, never stored by a cache.
     */
    admin?: boolean
  }
}

export {}
