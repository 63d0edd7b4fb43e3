// Calls this service's /api routes. Every answer is a {message, data} or {message, error} envelope.

/**
 * @param {string} path
 * @returns {Promise<{ ok: boolean, status: number, message: string, data?: any, error?: string }>}
 */
export async function getJson (path) {
  let response
  try {
    response = await fetch(path, { headers: { accept: 'application/json' } })
  } catch {
    return { ok: false, status: 0, message: 'The service cannot be reached', error: 'Check your connection and try again.' }
  }
  let body
  try {
    body = await response.json()
  } catch {
    return { ok: false, status: response.status, message: 'The service answered something unexpected', error: `HTTP ${response.status}` }
  }
  return { ok: response.ok, status: response.status, message: String(body.message ?? ''), data: body.data, error: body.error }
}
