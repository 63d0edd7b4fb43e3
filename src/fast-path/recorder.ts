/**
 * The fast path's side in Fastify: it links the fast path (fast-path.ts) to the client, the
 * rate limit and the metrics; refuses, at start-up, a `replay` route that is not safe to replay;
 * and records, after Fastify sent it, a replayable success for the URL it answered.
 *
 * An answer is recorded the second time Fastify sends it, not the first: most answers of a long
 * tail (each search asked once) are never asked again, and recording them cost CPU and memory
 * for nothing. A repeat then takes Fastify once more, and the fast path from the third time.
 */
import type { FastifyInstance, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { RenderedAnswer } from '../http/envelope.js'
import { requestIdOf } from '../http/request-id.js'
import '../http/route-policy.js'
import type { FastPath, Recording } from './fast-path.js'
import { PER_ANSWER_HEADERS, REPLAYED_HEADERS } from './headers.js'
import { mirroredByReplay, type HookLedger } from './hook-ledger.js'

export interface RecorderOptions {
  fastPath: FastPath
  ledger: HookLedger
}

function routeName (route: RouteOptions): string {
  return `${[route.method].flat().join(',')} ${route.url}`
}

export default fp<RecorderOptions>(async (app, { fastPath, ledger }) => {
  app.decorateReply('renderedAnswer', null)
  fastPath.link({
    isFreshAnswer: answer => app.pocketnet.peek()?.isFreshAnswer(answer) ?? false,
    countRequest: app.countRequest,
    requestId: requestIdOf,
  })
  // Successes are logged at debug: at that level every request must go through Fastify.
  fastPath.enabled = app.log.level !== 'debug' && app.log.level !== 'trace'
  fastPath.onError = err => app.log.error({ err }, 'fast path failed; Fastify answers instead')

  // Replay is checked twice: what can be told from the route at once, and its hooks once every
  // plugin had its say (hooks added after the route apply to it too).
  const replayRoutes: Array<{ route: RouteOptions, context: FastifyInstance }> = []
  app.addHook('onRoute', function checkReplay (route) {
    if (route.config?.replay !== true) return
    const methods = [route.method].flat()
    // Fastify adds a HEAD route beside each GET route, with the same config: the fast path
    // serves GET only, so HEAD needs no check.
    if (methods.length === 1 && methods[0] === 'HEAD') return
    if (methods.some(method => method !== 'GET')) throw new Error(`${routeName(route)}: replay is for GET routes only`)
    // auth: 'optional' as much as true: a signed-in caller's answer is theirs alone.
    if (route.config.auth !== undefined && route.config.auth !== false) {
      throw new Error(`${routeName(route)}: a route marked auth answers per user and must never be replayed; remove replay from its config`)
    }
    replayRoutes.push({ route, context: this })
  })
  app.addHook('onReady', function checkReplayHooks (done) {
    const problems = replayRoutes.flatMap(({ route, context }) => {
      const hooks = ledger.unmirroredHooks(context, route)
      if (hooks.length === 0) return []
      const named = hooks.map(hook => `${hook.kind} hook "${hook.name}"`).join(', ')
      return [`${routeName(route)} asks for replay, but a replayed answer would skip its ${named}. Remove replay from the route's config, or, if the fast path reproduces what the hook does, mark the hook with mirroredByReplay() (docs/fast-path.md)`]
    })
    done(problems.length === 0 ? undefined : new Error(problems.join('\n')))
  })

  // Answers Fastify sent once; an answer leaves with the cache entry that holds it.
  const sentOnce = new WeakSet<object>()
  const counters = new Map<string, Recording['count']>()
  const counterFor = (route: string): Recording['count'] => {
    let counter = counters.get(route)
    if (counter === undefined) counters.set(route, counter = app.metrics.fastAnswerCounter(route))
    return counter
  }
  app.addHook('onResponse', mirroredByReplay(function recordForReplay (request, reply, done) {
    const rendered: RenderedAnswer | null = reply.renderedAnswer
    const config = request.routeOptions.config
    if (rendered === null || config?.replay !== true || !fastPath.enabled || reply.statusCode !== 200 || request.method !== 'GET') {
      done()
      return
    }
    if (!sentOnce.has(rendered.answer)) {
      sentOnce.add(rendered.answer)
      done()
      return
    }
    const headers: string[] = []
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value === undefined || PER_ANSWER_HEADERS.has(name)) continue
      // A header not known to be the same for every request: this response is not replayed.
      if (!REPLAYED_HEADERS.has(name)) {
        done()
        return
      }
      headers.push(name, String(value))
    }
    const varyNames = String(reply.getHeader('vary') ?? '').split(',').map(name => name.trim().toLowerCase()).filter(Boolean)
    if (!varyNames.includes('*')) {
      fastPath.record(request.url, {
        count: counterFor(request.routeOptions.url ?? 'unmatched'),
        answer: new WeakRef(rendered.answer),
        body: rendered.body,
        etag: rendered.etag,
        headers,
        vary: varyNames.map(name => [name, request.headers[name]]),
        rateLimited: config.rateLimit !== false,
      })
    }
    done()
  }))
}, { name: 'fast-path', dependencies: ['pocketnet-client', 'rate-limit', 'metrics'] })
