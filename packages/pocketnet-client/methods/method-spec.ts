/**
 * A hand-written method (getnodeinfo, getuserprofile, search): the library-level meaning of its
 * params and result, over the table's encoding. `toWire` checks the caller's params and gives the
 * node's params by the node's names; the method table (table-spec.ts `tableParams`) places and
 * encodes them, as it does for every other method, so there is one encoder.
 */
import type { PocketnetNetwork } from '../address.js'
import type { TableMethodName } from './table.js'

/** What validation needs to know of the client: which network's addresses are valid. */
export interface CallContext {
  network: PocketnetNetwork
}

/** The node's params by the node's names (the table's), after the library-level meaning has been applied. */
export type NodeParams = Record<string, unknown>

/** One hand-written method: how typed params and results map to and from the node's. */
export interface MethodSpec<Params, Result> {
  name: TableMethodName
  /** Validates typed params (throwing RpcInvalidParamsError) and gives the node's named params. */
  toWire (params: Params, context: CallContext): NodeParams
  /** Turns the node's `result` into the typed result; throws RpcTransportError on a malformed answer. */
  fromWire (result: unknown, params: Params, named: NodeParams): Result
}

export const INT32_MAX = 2 ** 31 - 1
