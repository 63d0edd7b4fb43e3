/**
 * One call to the service: JSON in, the `{message, data}` envelope out, its `data` returned and
 * a `{message, error}` thrown as a MiniAppError.
 */
import { MiniAppError, reasonOf } from './errors.js'

export interface RequestOptions {
  /** GET unless said. */
  method?: string
  /** Sent as JSON. */
  body?: unknown
  /** Sends the session's token (`Authorization: Bearer`): for `/api/me` and routes that need sign-in. */
  auth?: boolean
  signal?: AbortSignal
  /** The browser's HTTP cache for this call, as `fetch` takes it: `no-cache` reads past an answer the browser holds. */
  cache?: RequestCache
  /** Headers of the call's own, such as `If-Match`. */
  headers?: Record<string, string>
}

/** The envelope's `data`, and the answer's headers (an `ETag`, say). */
export interface Answer<T> {
  data: T
  headers: Headers
}

export type Fetch = (url: string, init: RequestInit) => Promise<Response>

function retryAfterOf (response: Response): number | undefined {
  const seconds = Number(response.headers.get('retry-after'))
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined
}

export async function requestAnswer<T> (fetch: Fetch, url: string, options: RequestOptions & { token?: string | undefined }): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers, accept: 'application/json' }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  let response: Response
  try {
    response = await fetch(url, {
      method: options.method ?? 'GET',
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.cache === undefined ? {} : { cache: options.cache }),
    })
  } catch (error) {
    if (options.signal?.aborted === true) throw options.signal.reason
    throw new MiniAppError(0, 'The service cannot be reached', reasonOf(error))
  }
  let envelope: { message?: unknown, data?: unknown, error?: unknown, code?: unknown } | undefined
  try {
    envelope = await response.json()
  } catch {
    throw new MiniAppError(response.status, 'The service answered something unexpected', `HTTP ${response.status}`)
  }
  if (!response.ok) {
    const reason = typeof envelope?.message === 'string' ? envelope.message : `HTTP ${response.status}`
    throw new MiniAppError(response.status, reason, typeof envelope?.error === 'string' ? envelope.error : undefined, retryAfterOf(response), typeof envelope?.code === 'string' ? envelope.code : undefined)
  }
  return { data: envelope?.data as T, headers: response.headers }
}

/** The envelope's `data` alone. */
export async function requestData<T> (fetch: Fetch, url: string, options: RequestOptions & { token?: string | undefined }): Promise<T> {
  return (await requestAnswer<T>(fetch, url, options)).data
}
