/**
 * `sendrawtransaction [hexstring, payloadObject]` on the write path (`/post/`), as a 0.22.7 node
 * answers a plain payment (its `AddTransaction`, then the mempool's acceptance, in that order):
 * the params' types, the decoding, the first input known to the node's index, a transaction it
 * already has, then the standard rules, conflicts with the mempool, the inputs, the amounts, the
 * minimum relay fee, and last each input's signature. Every refusal is the node's code and text,
 * measured on a real regtest node (docs/pocketnet-node.md, "The wallet side").
 */
import bs58check from 'bs58check'
import type { ChainCoin, ChainHistory, ChainInput, ChainOutput, ChainTransaction } from '../chain.js'
import { DecodeError, decodeTransaction, serializeTransaction, txidOf, type RawOutput, type RawTransaction } from '../raw-transaction.js'
import { hasHighS, payToPubkeyHash, pushesOf, scriptFailure } from '../transaction-signatures.js'
import { RpcError, runtimeError, typeCheck } from './common.js'

/** The write path's names for the same call (the node registers all three to AddTransaction). */
export const SEND_METHODS: ReadonlySet<string> = new Set(['sendrawtransaction', 'sendrawtransactionwithmessage', 'addtransaction'])

/** The node's default `-minrelaytxfee`: satoshi per 1,000 bytes. */
export const MIN_RELAY_FEE_PER_KB = 1_000
/** The node's `DUST_RELAY_TX_FEE`: an output worth less than spending it costs at this rate is dust. */
const DUST_RELAY_FEE_PER_KB = 3_000
/** What spending an output adds to a transaction: an input with a signature and a compressed key. */
const SPEND_INPUT_BYTES = 148
const MAX_OP_RETURN_SCRIPT_BYTES = 83
const MAX_SCRIPTSIG_BYTES = 1650
const MAINNET_ADDRESS_VERSION = 0x37

const rejected = (reason: string): RpcError => new RpcError(-26, reason)

/** The node's FormatMoney: PKOIN with 2 to 8 decimals. */
function formatMoney (satoshi: bigint): string {
  const fraction = (satoshi % 100_000_000n).toString().padStart(8, '0').replace(/0+$/, '').padEnd(2, '0')
  return `${satoshi / 100_000_000n}.${fraction}`
}

/** The size of a transaction's bytes when written: its fee is measured against it. */
const sizeOf = (transaction: RawTransaction): number => serializeTransaction(transaction).length

const isOpReturn = (script: Uint8Array): boolean => script[0] === 0x6a

/** The node's dust rule, for an output that can be spent. */
function isDust (output: RawOutput): boolean {
  if (isOpReturn(output.script)) return false
  const outputBytes = 8 + (output.script.length < 0xfd ? 1 : 3) + output.script.length
  return output.value < BigInt(Math.floor((outputBytes + SPEND_INPUT_BYTES) * DUST_RELAY_FEE_PER_KB / 1000))
}

/** The standard-transaction rules (IsStandardTx) a plain payment can break, in the node's order. */
function standardProblem (transaction: RawTransaction): string | undefined {
  if (transaction.version < 1 || transaction.version > 2) return 'version'
  for (const input of transaction.inputs) {
    if (input.scriptSig.length > MAX_SCRIPTSIG_BYTES) return 'scriptsig-size'
    if (pushesOf(input.scriptSig) === undefined) return 'scriptsig-not-pushonly'
  }
  let opReturns = 0
  for (const output of transaction.outputs) {
    if (isOpReturn(output.script)) {
      if (output.script.length > MAX_OP_RETURN_SCRIPT_BYTES || pushesOf(output.script.subarray(1)) === undefined) return 'scriptpubkey'
      opReturns++
    } else if (payToPubkeyHash(output.script) === undefined) {
      // The emulator knows pay-to-public-key-hash and OP_RETURN outputs only.
      return 'scriptpubkey'
    } else if (isDust(output)) return 'dust'
  }
  return opReturns > 1 ? 'multi-op-return' : undefined
}

/** CheckTransaction's rules a payment can break. */
function structureProblem (transaction: RawTransaction): string | undefined {
  if (transaction.outputs.length === 0) return 'bad-txns-vout-empty'
  if (transaction.outputs.some(output => output.value < 0n)) return 'bad-txns-vout-negative'
  const spent = new Set(transaction.inputs.map(input => `${input.txid}:${input.vout}`))
  return spent.size < transaction.inputs.length ? 'bad-txns-inputs-duplicate' : undefined
}

/** An output as the emulator's chain keeps it. */
function chainOutput (output: RawOutput): ChainOutput {
  const amount = Number(output.value)
  const hash = payToPubkeyHash(output.script)
  if (hash !== undefined) return { address: bs58check.encode(Uint8Array.from([MAINNET_ADDRESS_VERSION, ...hash])), amount }
  const pushes = pushesOf(output.script.subarray(1))
  if (pushes?.length === 1 && pushes[0] !== undefined && pushes[0].length > 0) return { memo: Buffer.from(pushes[0]).toString('hex'), amount }
  return { script: Buffer.from(output.script).toString('hex'), amount }
}

/** Whether any output of a transaction in a block is still unspent by the blocks (the node's "already in block chain"). */
function hasUnspentOutput (chain: ChainHistory, transaction: ChainTransaction): boolean {
  return transaction.outputs.some((output, vout) => output.address !== undefined && chain.spenderOf(transaction.txid, vout, ['block']) === undefined)
}

export interface SendOptions {
  /** Check it and answer its txid, but keep it nowhere (a `lose-broadcast` fault). */
  lose?: boolean
}

/** Checks a signed transaction and puts it into the mempool; answers its txid, or throws the node's RpcError. */
export function sendRawTransaction (chain: ChainHistory, params: unknown[], options: SendOptions = {}): string {
  if (params.length === 0) throw runtimeError('JSON value is not a string as expected')
  typeCheck(params[0], 'string')
  if (params.length > 1) typeCheck(params[1], 'object')
  let raw: RawTransaction
  let bytes: Uint8Array
  try {
    raw = decodeTransaction(params[0] as string)
    bytes = serializeTransaction(raw)
  } catch (err) {
    if (err instanceof DecodeError) throw new RpcError(-22, 'TX decode failed')
    throw err
  }
  // The node looks up the first input's output in its own index (any transaction it has seen) to name the sender.
  const first = raw.inputs[0] as RawTransaction['inputs'][number]
  if (chain.findTransaction(first.txid)?.transaction.outputs[first.vout] === undefined) throw new RpcError(-32602, 'Invalid address')

  const txid = txidOf(bytes)
  const place = chain.placeOf(txid)
  if (place === 'mempool') return txid
  const known = chain.findTransaction(txid)
  if (place === 'block' && known !== undefined && hasUnspentOutput(chain, known.transaction)) throw new RpcError(-27, 'transaction already in block chain')

  const problem = structureProblem(raw) ?? standardProblem(raw)
  if (problem !== undefined) throw rejected(problem)
  if (raw.inputs.some(input => chain.spenderOf(input.txid, input.vout, ['mempool']) !== undefined)) throw rejected('txn-mempool-conflict')
  const coins: ChainCoin[] = []
  for (const input of raw.inputs) {
    const coin = chain.coin(input.txid, input.vout)
    if (coin === undefined || coin.output.address === undefined || chain.spenderOf(input.txid, input.vout, ['block']) !== undefined) throw rejected('bad-txns-inputs-missingorspent')
    coins.push(coin)
  }
  const valueIn = coins.reduce((sum, coin) => sum + BigInt(coin.output.amount), 0n)
  const valueOut = raw.outputs.reduce((sum, output) => sum + output.value, 0n)
  if (valueIn < valueOut) throw rejected(`bad-txns-in-belowout, value in (${formatMoney(valueIn)}) < value out (${formatMoney(valueOut)})`)
  const fee = valueIn - valueOut
  const size = sizeOf(raw)
  const minimum = BigInt(Math.max(1, Math.floor(MIN_RELAY_FEE_PER_KB * size / 1000)))
  if (fee < minimum) throw rejected(`min relay fee not met, ${fee} < ${minimum}`)

  for (const [index, coin] of coins.entries()) {
    const spentScript = Buffer.from(scriptHexOf(coin), 'hex')
    const failure = scriptFailure(raw, index, spentScript)
    if (failure !== undefined) throw rejected(`mandatory-script-verify-flag-failed (${failure})`)
  }
  for (const input of raw.inputs) {
    const pushes = pushesOf(input.scriptSig) as Uint8Array[]
    if (hasHighS(pushes.at(-2) as Uint8Array)) throw rejected('non-mandatory-script-verify-flag (Non-canonical signature: S value is unnecessarily high)')
    if (pushes.length > 2) throw rejected('non-mandatory-script-verify-flag (Stack size must be exactly one after execution)')
  }

  if (options.lose) return txid
  // A transaction a re-org dropped comes back as it was.
  chain.acceptToMempool(known?.transaction ?? {
    txid,
    time: raw.time,
    txType: 1,
    inputs: coins.map((coin): ChainInput => ({ address: coin.output.address as string, amount: coin.output.amount, txid: coin.transaction.txid, vout: coin.vout })),
    outputs: raw.outputs.map(chainOutput),
  })
  return txid
}

/** The P2PKH script of the address a coin pays. */
function scriptHexOf (coin: ChainCoin): string {
  const hash = Buffer.from(bs58check.decode(coin.output.address as string).subarray(1)).toString('hex')
  return `76a914${hash}88ac`
}
