// Calls this service's /api routes. Every answer is a {message, data} or {message, error} envelope.

/**
 * @typedef {{ ok: boolean, status: number, message: string, data?: any, error?: string }} Answer
 */

/**
 * A request to this service, JSON in and out. `token` goes in as `Authorization: Bearer`.
 * @param {string} path
 * `fresh` asks the service again even when the browser holds an answer it may reuse (with its ETag).
 * @param {{ method?: string, body?: unknown, token?: string, fresh?: boolean }} [options]
 * @returns {Promise<Answer>}
 */
export async function requestJson (path, { method = 'GET', body, token, fresh = false } = {}) {
  const headers = { accept: 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  if (token) headers.authorization = `Bearer ${token}`
  let response
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), ...(fresh ? { cache: 'no-cache' } : {}) })
  } catch {
    return { ok: false, status: 0, message: 'The service cannot be reached', error: 'Check your connection and try again.' }
  }
  let answer
  try {
    answer = await response.json()
  } catch {
    return { ok: false, status: response.status, message: 'The service answered something unexpected', error: `HTTP ${response.status}` }
  }
  return { ok: response.ok, status: response.status, message: String(answer?.message ?? ''), data: answer?.data, error: answer?.error }
}

/**
 * @param {string} path
 * @param {{ fresh?: boolean }} [options]
 * @returns {Promise<Answer>}
 */
export function getJson (path, { fresh = false } = {}) {
  return requestJson(path, { fresh })
}
