/**
 * Mini-apps: getapps, getappscores and getappcomments. The dataset has no apps, so each answers
 * `[]` once the node would have read its request.
 */
import { RpcError, getInt, getObj, getStr, keyOf, typeCheckParams } from './common.js'

/**
 * The request object every app method takes at position 0: type-checked when present (-3 for
 * anything but an object, null included), then read with get_obj (-32603 when missing).
 */
function appRequest (params: unknown[]): Record<string, unknown> {
  typeCheckParams(params, ['object'])
  return getObj(params[0])
}

/** Paging keys, found without regard to case, are read only with the right JSON type; a number there must be an int32 (-32603). */
function readPaging (request: Record<string, unknown>): void {
  for (const key of ['topHeight', 'pageStart', 'pageSize']) {
    const value = keyOf(request, key)
    if (typeof value === 'number') getInt(value)
  }
}

/** `getapps [{tags?, search?, topHeight?, pageStart?, pageSize?, orderBy?, orderDesc?}]`: tags, if an array, must hold strings (-32603). */
export function getApps (params: unknown[]): unknown[] {
  const request = appRequest(params)
  readPaging(request)
  const tags = keyOf(request, 'tags')
  if (Array.isArray(tags)) tags.forEach(getStr)
  return []
}

/** `getappscores` / `getappcomments [{app, ...paging}]`: `app` must be a string (-32602 "Missing 'app' parameter"). */
export function getAppItems (params: unknown[]): unknown[] {
  const request = appRequest(params)
  if (typeof keyOf(request, 'app') !== 'string') throw new RpcError(-32602, "Missing 'app' parameter")
  readPaging(request)
  return []
}
