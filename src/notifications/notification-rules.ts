/**
 * The rules of a notification and of where it may go (docs/notifications.md): who (`to`), what
 * (`header`, shown as "<app name>: <header>"), where it opens (`path`, inside the app) and its
 * de-duplication `id`; and the proxies a user may name (`NOTIFY_BASTYON_PROXIES`). Checked before
 * anything is written, with a NotificationError (400) naming the rule.
 */
import { isPocketnetAddress, type PocketnetNetwork } from 'pocketnet-client'
import { NotificationError } from './notification-errors.js'

export const MAX_RECIPIENTS = 1000
export const MAX_HEADER_CHARS = 100
export const MAX_PATH_CHARS = 200
export const ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$'
const ID = new RegExp(ID_PATTERN)
/** Printable ASCII without the space: what a URL's path carries unescaped. */
const PATH = /^\/[\x21-\x7e]*$/
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

/** What `app.notifications.send` takes. */
export interface NotificationInput {
  /** One address, or 1 to 1000 of them: each gets its own result, in this order. */
  to: string | string[]
  /** 1 to 100 characters; the push reads "<app name>: <header>". */
  header: string
  /** Where the host opens the app: a path inside it, such as `/orders/42`. */
  path: string
  /** The same id to the same user within 24 h is sent once (`duplicate` after). */
  id: string
}

/** A notification that passed its rules. */
export interface CheckedNotification {
  to: string[]
  header: string
  path: string
  id: string
}

/** 1 to 100 characters (code points), no control characters. */
export function isNotificationHeader (header: string): boolean {
  return header.length > 0 && [...header].length <= MAX_HEADER_CHARS && !CONTROL.test(header)
}

/** Starts with one `/`, printable ASCII without spaces or backslashes (a browser reads `/\\host` as `//host`), at most 200 characters. */
export function isNotificationPath (path: string): boolean {
  return path.length <= MAX_PATH_CHARS && PATH.test(path) && !path.startsWith('//') && !path.includes('\\')
}

export function checkNotification (input: NotificationInput, network: PocketnetNetwork): CheckedNotification {
  const raw = input as Partial<Record<keyof NotificationInput, unknown>> | null | undefined
  if (raw === null || typeof raw !== 'object') throw new NotificationError('NOTIFY_ERR_RECIPIENTS', 'a notification is an object {to, header, path, id}')
  const to = typeof raw.to === 'string' ? [raw.to] : raw.to
  if (!Array.isArray(to) || to.length < 1 || to.length > MAX_RECIPIENTS) {
    throw new NotificationError('NOTIFY_ERR_RECIPIENTS', `to must be an address or a list of 1 to ${MAX_RECIPIENTS} addresses (got ${Array.isArray(to) ? `${to.length} of them` : typeof to})`)
  }
  const bad = to.findIndex(address => typeof address !== 'string' || !isPocketnetAddress(address, network))
  if (bad >= 0) throw new NotificationError('NOTIFY_ERR_RECIPIENTS', `to[${bad}] is not an address of the ${network} network (got ${JSON.stringify(to[bad])?.slice(0, 60)})`)
  const { header, path, id } = raw
  if (typeof header !== 'string' || !isNotificationHeader(header)) {
    throw new NotificationError('NOTIFY_ERR_HEADER', `header must be 1 to ${MAX_HEADER_CHARS} characters without control characters (got ${typeof header === 'string' ? `${[...header].length} characters` : typeof header})`)
  }
  if (typeof path !== 'string' || !isNotificationPath(path)) {
    throw new NotificationError('NOTIFY_ERR_PATH', `path must be a path inside the app such as /orders/42: 1 to ${MAX_PATH_CHARS} printable ASCII characters starting with one /, no spaces or backslashes (got ${JSON.stringify(path)?.slice(0, 60)})`)
  }
  if (typeof id !== 'string' || !ID.test(id)) {
    throw new NotificationError('NOTIFY_ERR_ID', `id must be 1 to 128 characters, each a letter, a digit, ., _, : or - (got ${JSON.stringify(id)?.slice(0, 60)})`)
  }
  return { to: to as string[], header, path, id }
}

/** Loopback hosts, where plain http is allowed (tests, the demo's proxy emulator). */
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/

/**
 * The origin `value` names (`https://host[:port]`, nothing after it), or undefined when it is not
 * one: https, or http on a loopback host.
 */
export function proxyOrigin (value: string): string | undefined {
  // Scheme and authority only (a trailing / at most): no credentials, path, query or fragment.
  if (!/^https?:\/\/[^/?#@\s\\]+\/?$/i.test(value)) return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return undefined
  }
  if (url.protocol === 'https:') return url.origin
  if (url.protocol === 'http:' && LOOPBACK.test(url.hostname)) return url.origin
  return undefined
}

/** NOTIFY_BASTYON_PROXIES as origins; the first entry that is not an origin, when one is not. */
export function parseProxyList (value: string): { origins: string[], bad?: string } {
  const origins: string[] = []
  for (const entry of value.split(',').map(item => item.trim()).filter(item => item !== '')) {
    const origin = proxyOrigin(entry)
    if (origin === undefined) return { origins, bad: entry }
    origins.push(origin)
  }
  return { origins }
}
