/**
 * The public methods the emulator has no data for: the node's answer with nothing to report,
 * or, for the ones broken on 0.22.x and those served only on testnet, the node's failure.
 */
import { RpcError, getInt, isAddress, runtimeError, sqlPrepareError, typeCheck } from './common.js'
import { PUBLIC_METHODS, type ResultType } from './public-table.js'
import { WITHOUT_PARAMS } from './without-params.js'

const EMPTY: Record<ResultType, () => unknown> = { array: () => [], object: () => ({}), string: () => '' }

/** The empty value of `method`'s result type, or its failure; undefined for a name the node does not serve. */
export function otherMethod (method: string, params: unknown[]): { result: unknown } | undefined {
  const entry = Object.hasOwn(PUBLIC_METHODS, method) ? PUBLIC_METHODS[method] : undefined
  if (entry === undefined) return undefined
  if (entry.status === 'testnet-only') {
    // The emulator is a mainnet node.
    throw runtimeError(method === 'generateaddress' ? 'Only for testnet/regtest\n' : 'Only for testnet or regtest\n')
  }
  const missing = params.length === 0 ? WITHOUT_PARAMS[method] : undefined
  if (missing !== undefined) throw new RpcError(missing.code, missing.message, missing.status ?? 500)
  switch (method) {
    case 'getrecommendedaccountbyaddress':
      // 0.22.7's query does not prepare, whatever the params (found on a real node).
      throw sqlPrepareError('with addr as (select RowId as id, String as hash from Registry ...) ... group by Contents.RegId1 having count() > ? order by count() desc limit ?')
    case 'getbalancehistory':
      throw runtimeError('Reimplementation required because of new db structure')
    case 'gettopaccounts':
      // Below five params its content types stay empty and it answers [] at once; from five on
      // its query, written for the pre-0.22 schema, does not prepare.
      if (params.length < 5) return { result: [] }
      if (params.length > 7) {
        typeCheck(params[7], 'number')
        getInt(params[7])
      }
      throw sqlPrepareError('select t.String1 ... from Transactions t indexed by Transactions_Last_Id_Height ...')
    case 'getprofilecollections':
      return { result: profileCollections(params) }
  }
  return { result: EMPTY[entry.result]() }
}

/** Its params are read as a profile feed's, then its query, written for the pre-0.22 schema, does not prepare. */
function profileCollections (params: unknown[]): never {
  if (params.length > 9) {
    typeCheck(params[9], 'string')
    const viewer = params[9] as string
    if (viewer !== '' && !isAddress(viewer)) throw new RpcError(-5, `Invalid Pocketcoin address: ${viewer}`)
  }
  const feed = params.length > 10 && typeof params[10] === 'string' ? params[10] : ''
  if (feed !== '' && !isAddress(feed)) throw new RpcError(-5, `Invalid Pocketcoin address: ${feed}`)
  if (feed === '') throw new RpcError(-32600, 'No profile address', 400)
  throw sqlPrepareError('select ... from Transactions t indexed by Transactions_Type_Last_String1_Height_Id ...')
}
