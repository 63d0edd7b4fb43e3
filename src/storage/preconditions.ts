/**
 * HTTP's conditional requests for stored values (RFC 9110, 13.1): a value's ETag is its version
 * in quotes, a strong validator; `If-Match` names the versions a write expects (or `*`: any, the
 * key must exist), `If-None-Match: *` makes a PUT create only. If-Match compares strongly, so a
 * weak tag (`W/"…"`) never matches.
 */
import { HttpError } from '../http/errors.js'
import type { WriteConditions } from './storage-store.js'

/** The ETag header of a stored version. */
export function etagOf (version: string): string {
  return `"${version}"`
}

const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e]*)"$/

function badHeader (name: string, rule: string, value: string): HttpError {
  return new HttpError(400, `Invalid header: ${name}`, `${name} must be ${rule} (got ${JSON.stringify(value.slice(0, 100))})`)
}

/** The versions an If-Match header names, or '*'; undefined without the header. */
function ifMatchVersions (header: string | undefined): string[] | '*' | undefined {
  if (header === undefined) return undefined
  if (header.trim() === '*') return '*'
  const versions: string[] = []
  for (const tag of header.split(',')) {
    const match = ENTITY_TAG.exec(tag.trim())
    if (match === null) throw badHeader('if-match', '* or a list of ETags such as "q3vX0dPz6Qk1b8hN"', header)
    // A weak tag never matches under the strong comparison If-Match asks for.
    if (match[1] === undefined) versions.push(match[2] as string)
  }
  return versions
}

/** The conditions of a PUT: If-Match, and If-None-Match, which may only be `*` here. */
export function putConditions (headers: { 'if-match'?: string | undefined, 'if-none-match'?: string | undefined }): WriteConditions {
  const ifNoneMatch = headers['if-none-match']
  if (ifNoneMatch !== undefined && ifNoneMatch.trim() !== '*') throw badHeader('if-none-match', '* (create only) on a write', ifNoneMatch)
  return { ifVersion: ifMatchVersions(headers['if-match']), ifAbsent: ifNoneMatch !== undefined }
}

/** The conditions of a DELETE: If-Match only. */
export function deleteConditions (headers: { 'if-match'?: string | undefined, 'if-none-match'?: string | undefined }): Pick<WriteConditions, 'ifVersion'> {
  if (headers['if-none-match'] !== undefined) throw badHeader('if-none-match', 'absent on a delete', headers['if-none-match'])
  return { ifVersion: ifMatchVersions(headers['if-match']) }
}
