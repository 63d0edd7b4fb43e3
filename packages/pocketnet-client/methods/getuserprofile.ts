/** `getuserprofile`: profiles of one or more accounts. Wire: `[address, shortForm]`. */
import { addressRule, isPocketnetAddress } from '../address.js'
import { RpcInvalidParamsError, RpcTransportError } from '../errors.js'
import type { MethodSpec } from './method-spec.js'

/**
 * `basic` asks the node for its short form; `full` adds subscriptions, subscribers, blocking
 * and content (large for popular accounts).
 */
export type ProfileForm = 'basic' | 'full'

export interface GetUserProfileParams {
  /** One address, or up to 100 addresses at once. */
  address: string | string[]
  /** Default `basic`. */
  shortForm?: ProfileForm
}

/** A profile as the node sends it; fields are passed through unchanged. */
export interface UserProfile {
  address: string
  hash?: string
  id?: number
  name?: string
  /** Avatar URL. */
  i?: string
  reputation?: number
  postcnt?: number
  regdate?: number
  /** Present (true) on a deleted account, which carries only hash, address and id. */
  deleted?: boolean
  [field: string]: unknown
}

const MAX_ADDRESSES = 100
// Only the exact string "1" selects the short form; any other string (even "basic") gives
// the full form, and a non-string is an RPC error (docs/pocketnet-node.md, "getuserprofile").
const WIRE_FORM: Record<ProfileForm, string> = { basic: '1', full: '0' }

export const getuserprofile: MethodSpec<GetUserProfileParams, UserProfile[]> = {
  name: 'getuserprofile',
  toWire ({ address, shortForm = 'basic' }, { network }) {
    const list = Array.isArray(address) ? address : [address]
    if (list.length === 0 || list.length > MAX_ADDRESSES) {
      throw new RpcInvalidParamsError('getuserprofile', `address must be one address or a list of 1 to ${MAX_ADDRESSES}`)
    }
    const bad = list.find(item => !isPocketnetAddress(item, network))
    if (bad !== undefined) {
      throw new RpcInvalidParamsError('getuserprofile', `address must be ${addressRule(network)} (got ${JSON.stringify(bad)})`)
    }
    if (!(shortForm in WIRE_FORM)) {
      throw new RpcInvalidParamsError('getuserprofile', `shortForm must be "basic" or "full" (got ${JSON.stringify(shortForm)})`)
    }
    return { address, shortForm: WIRE_FORM[shortForm] }
  },
  fromWire (result) {
    if (!Array.isArray(result)) {
      throw new RpcTransportError('getuserprofile', 'Pocketnet node answered getuserprofile with something other than a list')
    }
    return result as UserProfile[]
  },
}
