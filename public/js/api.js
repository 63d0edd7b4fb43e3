// Calls this service's /api routes through the page's client. The panels get every answer as one
// Answer, never a throw: the data, or the {message, error} envelope's words and the HTTP status.
import { client } from './client.js'

/**
 * @typedef {{ ok: boolean, status: number, message: string, data?: any, error?: string }} Answer
 */

/**
 * A request to this service, JSON in and out. `auth` sends the session's token (signed-in routes).
 * `fresh` asks the service again even when the browser holds an answer it may reuse (with its ETag).
 * @param {string} path
 * @param {{ method?: string, body?: unknown, auth?: boolean, fresh?: boolean }} [options]
 * @returns {Promise<Answer>}
 */
export async function requestJson (path, { method = 'GET', body, auth = false, fresh = false } = {}) {
  try {
    const data = await client.request(path, { method, body, auth, ...(fresh ? { cache: 'no-cache' } : {}) })
    return { ok: true, status: 200, message: '', data }
  } catch (error) {
    // A MiniAppError: the service's status and words, or status 0 when there was no answer.
    return { ok: false, status: error?.status ?? 0, message: String(error?.reason ?? error), error: error?.detail }
  }
}

/**
 * @param {string} path
 * @param {{ fresh?: boolean }} [options]
 * @returns {Promise<Answer>}
 */
export function getJson (path, { fresh = false } = {}) {
  return requestJson(path, { fresh })
}
