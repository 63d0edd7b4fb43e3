/**
 * A transaction as the node's public `getrawtransaction [txid]` answers it, read once at the edge
 * into exact values: amounts in integer satoshi, the block it is in (or none, while it waits in
 * the mempool or after a re-org put it back there). See docs/payments.md, "What the node answers".
 */
import { PaymentError } from './errors.js'
import { pkoinToSatoshi } from './satoshi.js'

export interface ChainInput {
  /** The address the spent output paid; absent for inputs that spend none (coinbase). */
  address?: string
  /** What the spent output held. */
  satoshi: number
}

export interface ChainOutput {
  /** The output's index in the transaction. */
  n: number
  /** The addresses the output pays; `[""]` for an OP_RETURN output. */
  addresses: string[]
  satoshi: number
  /** The output script, lowercase hex: `6a…` for OP_RETURN. */
  scriptHex: string
}

export interface ChainTransaction {
  /** Lowercase hex, 64 characters. */
  txid: string
  /** The block holding it; both absent while it is not in a block. */
  height?: number
  blockHash?: string
  inputs: ChainInput[]
  outputs: ChainOutput[]
}

const HASH = /^[0-9a-f]{64}$/i

function malformed (what: string): never {
  throw new PaymentError('PAYMENT_ERR_MALFORMED_TRANSACTION', `getrawtransaction answered a transaction whose ${what}`)
}

function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function readInput (input: unknown, index: number): ChainInput {
  if (!isRecord(input)) malformed(`input ${index} is not an object`)
  const { address, value } = input
  if (address !== undefined && typeof address !== 'string') malformed(`input ${index} has an address that is not a string`)
  if (value !== undefined && typeof value !== 'number') malformed(`input ${index} has a value that is not a number`)
  return {
    ...(address === undefined || address === '' ? {} : { address }),
    satoshi: value === undefined ? 0 : satoshiOf(value, `input ${index}`),
  }
}

function readOutput (output: unknown, index: number): ChainOutput {
  if (!isRecord(output)) malformed(`output ${index} is not an object`)
  const { n, value, scriptPubKey } = output
  if (!Number.isSafeInteger(n) || (n as number) < 0) malformed(`output ${index} has no index n`)
  if (typeof value !== 'number') malformed(`output ${index} has a value that is not a number`)
  if (!isRecord(scriptPubKey) || typeof scriptPubKey.hex !== 'string') malformed(`output ${index} has no scriptPubKey.hex`)
  const addresses = scriptPubKey.addresses ?? []
  if (!Array.isArray(addresses) || !addresses.every(address => typeof address === 'string')) malformed(`output ${index} has addresses that are not strings`)
  return { n: n as number, addresses: addresses as string[], satoshi: satoshiOf(value, `output ${index}`), scriptHex: scriptPubKey.hex.toLowerCase() }
}

function satoshiOf (value: number, where: string): number {
  try {
    return pkoinToSatoshi(value, `the value of ${where}`)
  } catch (error) {
    malformed(`${where} has a value that is not a whole number of satoshi (${(error as Error).message})`)
  }
}

/**
 * The transaction in a `getrawtransaction` answer, or `undefined` for `{}` (what the node's code
 * answers for a txid it does not know; a node may answer a JSON-RPC error instead:
 * {@link isUnknownTransactionError}).
 * @throws PaymentError `PAYMENT_ERR_MALFORMED_TRANSACTION` when a field is missing or of the wrong
 *   type, an amount is not whole satoshi, or only one of `height` and `blockHash` is present.
 * @example readChainTransaction(await api.rpc.getrawtransaction({ txid }))
 */
export function readChainTransaction (answer: unknown): ChainTransaction | undefined {
  if (!isRecord(answer)) malformed('answer is not an object')
  if (Object.keys(answer).length === 0) return undefined
  const { txid, height, blockHash, vin, vout } = answer
  if (typeof txid !== 'string' || !HASH.test(txid)) malformed('txid is not 64 hex digits')
  if (!Array.isArray(vin)) malformed('vin is not a list')
  if (!Array.isArray(vout)) malformed('vout is not a list')
  if ((height === undefined) !== (blockHash === undefined)) malformed('block is half given: height and blockHash come together')
  if (height !== undefined && (!Number.isSafeInteger(height) || (height as number) < 0)) malformed('height is not a block height')
  if (blockHash !== undefined && (typeof blockHash !== 'string' || !HASH.test(blockHash))) malformed('blockHash is not 64 hex digits')
  return {
    txid: txid.toLowerCase(),
    ...(height === undefined ? {} : { height: height as number, blockHash: (blockHash as string).toLowerCase() }),
    inputs: vin.map(readInput),
    outputs: vout.map(readOutput),
  }
}

/**
 * True when `error` is how a real node (0.22.7) answers `getrawtransaction` for a txid it does
 * not know: JSON-RPC error -32603 "Transaction::List reconstruct failed - no return data for
 * <txid> tx". The client raises it as `RPC_ERR_NODE`, or, since -32603 reads as "the node is
 * unwell" and is tried on the other nodes, as `RPC_ERR_UNAVAILABLE` when every node said so.
 * Any other failure (a timeout, one node of several) says nothing about the transaction and must
 * not be read as "it does not exist".
 */
export function isUnknownTransactionError (error: unknown): boolean {
  if (!isRecord(error)) return false
  if (error.code === 'RPC_ERR_NODE') return error.rpcCode === -32603 && typeof error.rpcMessage === 'string' && error.rpcMessage.includes('no return data')
  if (error.code !== 'RPC_ERR_UNAVAILABLE' || !(error.cause instanceof AggregateError)) return false
  const attempts: unknown[] = error.cause.errors
  return attempts.length > 0 && attempts.every(attempt => isRecord(attempt) && attempt.code === 'RPC_ERR_NODE' && isUnknownTransactionError(attempt))
}
