/**
 * One push through the user's Bastyon proxy: `POST <proxy>/miniapp/sendNotification` with JSON
 * `{address, appId, url, header}`, as the host's own code calls it. The proxy looks up the token the
 * user's host registered for (address, appId), reads the app's name and icon from the chain, and
 * pushes "<app name>: <header>" opening `application?id=<appId>&p=<hex of url>`.
 *
 * Delivered only on HTTP 200 with `{"result": "success"}`, the proxy's success envelope. Everything
 * else is a failed attempt, retried by the outbox: the proxy answers every failure the same way
 * (`{"error": …, "code": 500}`, status 500; its IP limiter too), whether it found no token for the
 * user or failed to push, so no answer says "never retry". Redirects are not followed: only the
 * proxies of NOTIFY_BASTYON_PROXIES are posted to.
 *
 * Which proxy holds a user's token is not told to the app: the host's `registerForNotifications`
 * picks a proxy of the user's list whose notifications are on and resolves with the proxy's token
 * row, which does not name the proxy. So a push tries the user's channel's proxy first (the one
 * that took the last push, or the one the front-end named), then the other allowed proxies in
 * their order, and stops at the first that takes it: the proxies without the token refuse it, so
 * one push reaches the user.
 *
 * Over node:http(s) with keep-alive connections rather than `fetch`: a push is one small POST and
 * its short answer, and undici's `fetch` cost more than twice the CPU a push, on the one CPU the
 * service's answers need (bench/push-transport.ts; bench/results.md, "Notifications").
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { REAL_TIMERS, type Timers } from 'pocketnet-client'
import type { DeliveryRow } from './notification-store.js'

export const PUSH_USER_AGENT = 'bastyon-miniapp-backend notifications/1'

/** The longest part of a proxy's refusal kept in the delivery row and the logs. */
const MAX_SNIPPET_CHARS = 120
/** A proxy's answer is a few dozen bytes; one longer than this is refused unread. */
const MAX_ANSWER_BYTES = 64 * 1024
/**
 * The connections to the proxies, kept open between pushes (an idle one does not keep the
 * process alive, and is closed after IDLE_TIMEOUT_MS).
 */
const IDLE_TIMEOUT_MS = 10_000
const HTTP_AGENT = new HttpAgent({ keepAlive: true, timeout: IDLE_TIMEOUT_MS })
const HTTPS_AGENT = new HttpsAgent({ keepAlive: true, timeout: IDLE_TIMEOUT_MS })

/** An attempt the proxy did not take, with what it answered (never the header). */
export class PushRefusedError extends Error {
  constructor (readonly statusCode: number | null, detail: string) {
    super(detail)
    this.name = 'PushRefusedError'
  }
}

export interface PushOptions {
  appId: string
  /** How long one attempt may take, answer included. */
  timeoutMs: number
  timers?: Timers
}

/** The proxies a push tries, in order: the channel's own (while still allowed), then the other allowed ones. */
export function proxiesToTry (target: string, allowed: readonly string[]): string[] {
  return allowed.includes(target) ? [target, ...allowed.filter(proxy => proxy !== target)] : [...allowed]
}

/**
 * Pushes through the first of `proxies` that takes it, one after the other, and resolves with
 * that proxy's origin. Throws a PushRefusedError naming what each answered when none took it (or
 * the shutdown's reason when `shutdown` aborted it).
 */
export async function pushThroughFirstProxy (row: DeliveryRow, proxies: readonly string[], shutdown: AbortSignal, options: PushOptions): Promise<string> {
  const refusals: string[] = []
  let status: number | null = null
  for (const proxy of proxies) {
    try {
      await pushThroughProxy({ ...row, target: proxy }, shutdown, options)
      return proxy
    } catch (err) {
      if (!(err instanceof PushRefusedError)) throw err
      status ??= err.statusCode
      refusals.push(proxies.length === 1 ? err.message : `${proxy} ${err.message}`)
    }
  }
  throw new PushRefusedError(status, refusals.length === 0 ? 'no proxy to send to' : refusals.join('; '))
}

/** Resolves when the proxy took the push; throws PushRefusedError when not (or the shutdown's reason when `shutdown` aborted it). */
export async function pushThroughProxy (row: DeliveryRow, shutdown: AbortSignal, options: PushOptions): Promise<void> {
  const timers = options.timers ?? REAL_TIMERS
  const controller = new AbortController()
  const timeout = timers.setTimeout(() => { controller.abort(new PushRefusedError(null, `no answer within ${options.timeoutMs} ms`)) }, options.timeoutMs)
  const onShutdown = (): void => { controller.abort(shutdown.reason) }
  if (shutdown.aborted) onShutdown()
  else shutdown.addEventListener('abort', onShutdown, { once: true })
  try {
    const body = JSON.stringify({ address: row.address, appId: options.appId, url: row.path, header: row.header })
    const { status, text } = await post(`${row.target}/miniapp/sendNotification`, body, controller.signal)
    let result: unknown
    try { result = (JSON.parse(text) as { result?: unknown } | null)?.result } catch {}
    if (status === 200 && result === 'success') return
    throw new PushRefusedError(status, `answered ${status}: ${JSON.stringify(oneLine(text))}`)
  } catch (err) {
    if (controller.signal.aborted) throw controller.signal.reason
    if (err instanceof PushRefusedError) throw err
    throw new PushRefusedError(null, `network error: ${networkErrorText(err)}`)
  } finally {
    timers.clearTimeout(timeout)
    shutdown.removeEventListener('abort', onShutdown)
  }
}

/**
 * POSTs `body` (JSON) to `url` and resolves with the answer's status and text, whatever the
 * status: a redirect is an answer like any other, not followed. Rejects on a network error, on
 * `signal`, and with a PushRefusedError on an answer longer than MAX_ANSWER_BYTES.
 */
function post (url: string, body: string, signal: AbortSignal): Promise<{ status: number, text: string }> {
  const https = url.startsWith('https:')
  return new Promise((resolve, reject) => {
    const request = (https ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      agent: https ? HTTPS_AGENT : HTTP_AGENT,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': PUSH_USER_AGENT },
      signal,
    }, (response: IncomingMessage) => {
      const status = response.statusCode ?? 0
      const chunks: Buffer[] = []
      let bytes = 0
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length
        if (bytes > MAX_ANSWER_BYTES) {
          // Not read further: the connection goes with it.
          response.destroy()
          reject(new PushRefusedError(status, `answered ${status} with more than ${MAX_ANSWER_BYTES} bytes`))
          return
        }
        chunks.push(chunk)
      })
      response.on('end', () => { resolve({ status, text: Buffer.concat(chunks).toString('utf8') }) })
      response.on('error', reject)
      // A connection lost mid-answer (or the answer destroyed above) may end with no 'error': settled here, once.
      response.on('close', () => { if (!response.complete) reject(new PushRefusedError(status, `answered ${status}, then the connection closed before the end of the answer`)) })
    })
    request.on('error', reject)
    request.end(body)
  })
}

function oneLine (text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, MAX_SNIPPET_CHARS)
}

/** A network error by its code (ECONNREFUSED …): its message may name the proxy's address, which the code says nothing more of. */
function networkErrorText (err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code === 'string') return code
  return err instanceof Error ? err.message.slice(0, MAX_SNIPPET_CHARS) : 'unknown'
}
