/**
 * An offline Bastyon proxy, its mini-app routes only, written from the proxy's own code
 * (pocketnet.gui's proxy16: the `miniapp` section of its API, its token store, its signature check,
 * its envelopes). For tests and the demo, on loopback; it shares no code with src/.
 *
 * Routes, mounted for every method as the proxy mounts them (`app.all`), their parameters the query
 * and the JSON (or form) body merged:
 * - `/miniapp/addToken {appId, address, signature}`: the token row of (appId, address), made on
 *   the first call. Checked like the proxy's `authorization: 'signature'`: `signature` is a host
 *   signature object whose nonce's `s` is the hex of the proxy's session (`pocketnetproxy`), signed
 *   by the key of `signature.address`. As upstream, the `address` parameter is not compared with
 *   the signer's.
 * - `/miniapp/checkToken {appId, address, signature}` → `{exists}`.
 * - `/miniapp/removeTokens {appId, address, signature}` → `{removed}` (upstream, this route calls
 *   a method its token store does not have and answers 500: `fixedRemoveTokens: false` does that).
 * - `/miniapp/sendNotification {address, appId, url, header}`, no authorization: finds the token,
 *   reads the app's name and domain (`getapps` of the node given, or `apps`), and records the push
 *   the proxy would hand to Firebase: `{address, appId, image: https://<scope>/b_icon.png, url:
 *   application?id=<appId>&p=<hex of url>, body: "<name>: <header>", at}`.
 *
 * Envelopes as the proxy's: success is 200 `{"result": "success", "data": …}`; a failure is
 * `{"error": <the rejection>, "code": N}` with status N (500 by default): an Error rejection
 * serializes as `{}`, so "no token" is 500 `{"error":{},"code":500}`, as is "no such app"; a
 * refused signature is 401 `{"error":"Unauthorized","code":401}`; the IP limiter's refusal is
 * 500 `{"error":"iplimiter","code":500}`. A synchronous throw in a route (checkToken without a
 * parameter) is Express's own 500 page.
 *
 * Controls under `/__proxy/` (loopback clients that are no browser, as the node's controls), and the
 * same as methods: `GET /__proxy/pushes?address=` lists the recorded pushes, `POST /__proxy/tokens
 * {appId, address}` adds a token (`DELETE` with the same query removes it), `POST /__proxy/faults
 * {fault: 'http-500' | 'iplimiter' | 'hang', count}` makes the next `count` sends fail that way
 * (`DELETE /__proxy/faults` clears them).
 */
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { ripemd160 } from '@noble/hashes/legacy.js'
import { sha256 } from '@noble/hashes/sha2.js'
import bs58check from 'bs58check'
import { isLoopback } from './controls.js'

export const PROXY_CONTROLS_PATH = '/__proxy'

/** What the proxy's `session` is: the proxies sign-checked nonces must name it (hex-encoded, `s=`). */
export const PROXY_SESSION = 'pocketnetproxy'

export type ProxyFault = 'http-500' | 'iplimiter' | 'hang'
const FAULTS: readonly ProxyFault[] = ['http-500', 'iplimiter', 'hang']

/** An app as the chain describes it (`getapps`: settings `s1` with `n` name and `s` scope, its domain). */
export interface ProxyApp {
  name: string
  scope: string
}

/** A token row, as the proxy's NeDB file keeps it. */
export interface ProxyToken {
  _id: string
  token: string
  appId: string
  address: string
  date: string
  key: string
}

/** A push the proxy would have handed to Firebase. */
export interface RecordedPush {
  address: string
  appId: string
  image: string
  url: string
  body: string
  /** Epoch ms. */
  at: number
}

export interface BastyonProxyOptions {
  /** Default 127.0.0.1. */
  host?: string
  /** Default 0: a free port. */
  port?: number
  /** The apps by id, as `getapps` would describe them. Asked first. */
  apps?: Record<string, ProxyApp>
  /** A node's RPC URL, asked `getapps` for an app `apps` does not name (the node emulator has none). */
  node?: string
  /** The proxy's session, which signed nonces name. Default `pocketnetproxy`. */
  session?: string
  /** Epoch ms: signatures' expiry and the pushes' `at`. Default Date.now. */
  now?: () => number
  /** The controls under /__proxy/. Default true. */
  controls?: boolean
  /** removeTokens as it was meant (true) rather than as the proxy answers it today (500). Default false. */
  fixedRemoveTokens?: boolean
}

export interface BastyonProxy {
  /** The proxy's origin, e.g. http://127.0.0.1:40123: what a host's registerForNotifications resolves with. */
  readonly url: string
  /** Recorded pushes, oldest first; of one address when given. */
  pushes (address?: string): RecordedPush[]
  /** sendNotification calls answered so far, whatever their outcome. */
  readonly sendCalls: number
  tokens (): ProxyToken[]
  addToken (appId: string, address: string): ProxyToken
  removeTokens (appId: string, address: string): number
  /** The next `count` sendNotification calls fail as `fault` says (hang: no answer until closed). */
  fault (fault: ProxyFault, count?: number): void
  clearFaults (): void
  close (): Promise<void>
}

const json = (response: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body)
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) })
  response.end(text)
}

/** The proxy's `_success(data)`. */
const success = (response: ServerResponse, data: unknown): void => { json(response, 200, { result: 'success', data }) }

/** The proxy's `_fail(error, code)`: an Error serializes as its own enumerable fields, `{}` for a plain one. */
const fail = (response: ServerResponse, error: unknown, code?: number): void => {
  const status = code === undefined || code < 100 ? 500 : code
  json(response, status, { error: error instanceof Error ? { ...error } : error, code: status })
}

/** Express's answer to a route that threw before it answered. */
const expressError = (response: ServerResponse): void => {
  const page = '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Internal Server Error</pre>\n</body>\n</html>\n'
  response.writeHead(500, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(page) })
  response.end(page)
}

/** The proxy's `hexEncode`: UTF-16 code units above 0xFF lowered by 0x350, each as at least two hex digits. */
export function proxyHexEncode (text: string): string {
  let result = ''
  for (let i = 0; i < text.length; i++) {
    let unit = text.charCodeAt(i)
    if (unit > 0xFF) unit -= 0x350
    result += unit.toString(16).padStart(2, '0')
  }
  return result
}

/** The proxy's `hexDecode`: pairs of hex digits, those from 128 up raised by 0x350. */
function proxyHexDecode (hex: string): string {
  let result = ''
  for (let i = 2; i <= hex.length; i += 2) {
    let unit = parseInt(hex.substring(i - 2, i), 16)
    if (unit >= 128) unit += 0x350
    result += String.fromCharCode(unit)
  }
  return result
}

/** The proxy's `parsesignature`: `k=v` pairs split on commas, pairs without both sides skipped. */
function parseNonce (nonce: string): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const pair of nonce.split(',')) {
    const [name, value] = pair.split('=')
    if (name && value) fields[name] = value
  }
  return fields
}

/** Pocketnet's P2PKH address of a public key (mainnet, version 0x37), as the proxy's bitcoin library makes it. */
function addressOf (pubkey: Uint8Array): string {
  return bs58check.encode(Uint8Array.from([0x37, ...ripemd160(sha256(pubkey))]))
}

interface SignatureFields { nonce?: unknown, signature?: unknown, pubkey?: unknown, address?: unknown, v?: unknown }

/** The proxy's `authorization.signature(data)`: `signatureid` (the nonce's session and expiry), then the key's signature and address. */
export function proxySignatureHolds (candidate: unknown, session: string, now: number): boolean {
  if (candidate === null || typeof candidate !== 'object') return false
  const signature = candidate as SignatureFields
  if (signature.v) {
    if (typeof signature.nonce !== 'string') return false
    const nonce = parseNonce(signature.nonce)
    if (!nonce.date || !nonce.exp || !nonce.s) return false
    // As upstream: `new Date(Number(date))`; an ISO date (what hosts write) is NaN there, and never expires.
    const expiresAt = Number(nonce.date) + Number(nonce.exp) * 1000
    if (now > expiresAt) return false
    if (proxyHexDecode(nonce.s) !== session) return false
  }
  if (typeof signature.pubkey !== 'string' || typeof signature.nonce !== 'string' || typeof signature.address !== 'string' || typeof signature.signature !== 'string') return false
  try {
    const pubkey = Uint8Array.from(Buffer.from(signature.pubkey, 'hex'))
    const text = new TextEncoder().encode(signature.nonce)
    // With `v`, the nonce's SHA-256 is signed; without, the nonce's own bytes are the hash.
    const hash = signature.v ? sha256(text) : text
    const verified = secp256k1.verify(Uint8Array.from(Buffer.from(signature.signature, 'hex')), hash, pubkey, { prehash: false, lowS: false, format: 'compact' })
    return verified && signature.address === addressOf(pubkey)
  } catch {
    return false
  }
}

const MAX_BODY_BYTES = 5 * 1024 * 1024

async function readParameters (request: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw new Error('body too large')
    chunks.push(chunk as Buffer)
  }
  const text = Buffer.concat(chunks).toString('utf8')
  const type = request.headers['content-type'] ?? ''
  let body: Record<string, unknown> = {}
  if (text !== '' && /application\/json/i.test(type)) {
    const parsed = JSON.parse(text) as unknown
    if (parsed !== null && typeof parsed === 'object') body = parsed as Record<string, unknown>
  } else if (text !== '' && /application\/x-www-form-urlencoded/i.test(type)) {
    body = Object.fromEntries(new URLSearchParams(text))
  }
  return { ...Object.fromEntries(url.searchParams), ...body }
}

export async function startBastyonProxy (options: BastyonProxyOptions = {}): Promise<BastyonProxy> {
  const now = options.now ?? Date.now
  const session = options.session ?? PROXY_SESSION
  const controlsOn = options.controls ?? true
  const tokens: ProxyToken[] = []
  const pushes: RecordedPush[] = []
  const faults: ProxyFault[] = []
  const sockets = new Set<Socket>()
  const hanging = new Set<ServerResponse>()
  let sendCalls = 0

  const findToken = (appId: unknown, address: unknown): ProxyToken | undefined => tokens.find(token => token.appId === appId && token.address === address)
  const addToken = (appId: string, address: string): ProxyToken => {
    const existing = findToken(appId, address)
    if (existing !== undefined) return existing
    const token: ProxyToken = {
      _id: randomBytes(8).toString('base64url'),
      token: createHash('sha256').update(`${appId}:${address}:${randomBytes(16).toString('hex')}`).digest('hex'),
      appId,
      address,
      date: new Date(now()).toISOString(),
      key: randomBytes(8).toString('hex'),
    }
    tokens.push(token)
    return token
  }
  const removeTokens = (appId: string, address: string): number => {
    let removed = 0
    for (let i = tokens.length - 1; i >= 0; i--) {
      if (tokens[i]?.appId === appId && tokens[i]?.address === address) {
        tokens.splice(i, 1)
        removed++
      }
    }
    return removed
  }

  /** `fetchApplicationDetails`: `apps` first, then the node's `getapps`; undefined when no app has the id. */
  const appDetails = async (appId: string): Promise<ProxyApp | undefined> => {
    const known = options.apps?.[appId]
    if (known !== undefined) return known
    if (options.node === undefined) return undefined
    const response = await fetch(`${options.node}/public/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ method: 'getapps', params: [{ id: appId, pageStart: 0, pageSize: 1 }] }) })
    const answer = await response.json() as { result?: Array<{ p?: { s1?: string } }> }
    const first = answer.result?.[0]
    if (first === undefined) return undefined
    const settings = first.p?.s1 === undefined ? {} : JSON.parse(first.p.s1) as { s?: string, n?: string }
    return { scope: settings.s ?? '', name: settings.n ?? '' }
  }

  const signed = (data: Record<string, unknown>): boolean => proxySignatureHolds(data.signature, session, now())

  const miniapp = async (path: string, data: Record<string, unknown>, response: ServerResponse): Promise<void> => {
    const { appId, address } = data
    switch (path) {
      case '/miniapp/addToken':
        if (!signed(data)) return fail(response, 'Unauthorized', 401)
        // createToken: a missing parameter is caught and rejected with a message of its own.
        if (!appId || !address) return fail(response, { message: 'Token creation failed' })
        return success(response, addToken(String(appId), String(address)))
      case '/miniapp/checkToken':
        if (!signed(data)) return fail(response, 'Unauthorized', 401)
        // getToken's check throws before any promise: Express answers.
        if (!appId || !address) return expressError(response)
        return success(response, { exists: findToken(appId, address) !== undefined })
      case '/miniapp/removeTokens':
        if (!signed(data)) return fail(response, 'Unauthorized', 401)
        if (options.fixedRemoveTokens !== true || !appId || !address) return expressError(response)
        return success(response, { removed: removeTokens(String(appId), String(address)) })
      case '/miniapp/sendNotification':
        return await send(data, response)
    }
  }

  const send = async (data: Record<string, unknown>, response: ServerResponse): Promise<void> => {
    sendCalls++
    const fault = faults.shift()
    if (fault === 'http-500') return fail(response, {})
    if (fault === 'iplimiter') return fail(response, 'iplimiter')
    if (fault === 'hang') {
      hanging.add(response)
      return
    }
    // The action passes each parameter, so the proxy's defaults (url '', header 'New Offer') never apply.
    const { address, appId, url, header } = data
    if (!appId || !address) return fail(response, { name: 'ValidationError', details: { ...(!appId ? { appId: 'Required field is missing' } : {}), ...(!address ? { address: 'Required field is missing' } : {}) } })
    const token = findToken(appId, address)
    if (token === undefined) return fail(response, new Error('Authentication token not found'))
    let app: ProxyApp | undefined
    try {
      app = await appDetails(String(appId))
    } catch (err) {
      return fail(response, err instanceof Error ? err : new Error(String(err)))
    }
    if (app === undefined) return fail(response, new Error('Application not found'))
    // hexEncode reads url's length: without one, a TypeError, serialized as {}.
    if (typeof url !== 'string') return fail(response, new TypeError('Cannot read properties of undefined (reading \'length\')'))
    pushes.push({
      address: token.address,
      appId: String(appId),
      image: `https://${app.scope}/b_icon.png`,
      url: `application?id=${String(appId)}&p=${proxyHexEncode(url)}`,
      body: `${app.name}: ${String(header)}`,
      at: now(),
    })
    success(response, { success: true })
  }

  const control = (request: IncomingMessage, path: string, data: Record<string, unknown>, response: ServerResponse): void => {
    if (!isLoopback(request.socket.remoteAddress) || request.headers.origin !== undefined) {
      return json(response, 403, { error: 'the proxy\'s controls answer loopback clients that are not browsers only' })
    }
    const { method } = request
    if (path === '/pushes' && method === 'GET') return json(response, 200, { pushes: pushesOf(data.address) })
    if (path === '/tokens' && method === 'GET') return json(response, 200, { tokens })
    if (path === '/tokens' && (method === 'POST' || method === 'DELETE')) {
      if (typeof data.appId !== 'string' || typeof data.address !== 'string' || data.appId === '' || data.address === '') return json(response, 400, { error: 'appId and address must be non-empty strings' })
      if (method === 'POST') return json(response, 200, { token: addToken(data.appId, data.address) })
      return json(response, 200, { removed: removeTokens(data.appId, data.address) })
    }
    if (path === '/faults' && method === 'POST') {
      const count = data.count ?? 1
      if (!FAULTS.includes(data.fault as ProxyFault) || typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 10_000) {
        return json(response, 400, { error: `fault must be one of ${FAULTS.join(', ')} and count a whole number from 1 to 10000` })
      }
      for (let i = 0; i < count; i++) faults.push(data.fault as ProxyFault)
      return json(response, 200, { pending: faults.length })
    }
    if (path === '/faults' && method === 'DELETE') {
      faults.length = 0
      return json(response, 200, { pending: 0 })
    }
    json(response, 404, { error: `no control ${method ?? ''} ${PROXY_CONTROLS_PATH}${path}` })
  }

  const pushesOf = (address: unknown): RecordedPush[] => pushes.filter(push => address === undefined || push.address === address).map(push => ({ ...push }))

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://proxy.invalid')
    readParameters(request, url).then(async data => {
      if (controlsOn && url.pathname.startsWith(`${PROXY_CONTROLS_PATH}/`)) return control(request, url.pathname.slice(PROXY_CONTROLS_PATH.length), data, response)
      if (request.method === 'OPTIONS') return success(response, null)
      if (url.pathname.startsWith('/miniapp/') && ['/miniapp/addToken', '/miniapp/checkToken', '/miniapp/removeTokens', '/miniapp/sendNotification'].includes(url.pathname)) {
        return await miniapp(url.pathname, data, response)
      }
      // Express's answer to a path no route has.
      const page = `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot ${request.method ?? 'GET'} ${url.pathname}</pre>\n</body>\n</html>\n`
      response.writeHead(404, { 'content-type': 'text/html; charset=utf-8' })
      response.end(page)
    }).catch(() => {
      // A body that is not JSON: Express's body parser answers 400.
      if (!response.headersSent) {
        response.writeHead(400, { 'content-type': 'text/html; charset=utf-8' })
        response.end('Bad Request')
      }
    })
  })
  server.on('connection', socket => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => { resolve() })
  })
  const { address, port } = server.address() as { address: string, port: number }
  const host = address.includes(':') ? `[${address}]` : address

  return {
    url: `http://${host}:${port}`,
    pushes: pushesOf,
    get sendCalls () { return sendCalls },
    tokens: () => tokens.map(token => ({ ...token })),
    addToken,
    removeTokens,
    fault (fault, count = 1) {
      if (!FAULTS.includes(fault)) throw new TypeError(`fault must be one of ${FAULTS.join(', ')}`)
      for (let i = 0; i < count; i++) faults.push(fault)
    },
    clearFaults () { faults.length = 0 },
    async close () {
      for (const response of hanging) response.destroy()
      hanging.clear()
      const closed = new Promise<void>(resolve => server.close(() => { resolve() }))
      for (const socket of sockets) socket.destroy()
      await closed
    },
  }
}
