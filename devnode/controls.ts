/**
 * The emulator's controls over HTTP, for the demo and for tests in another process: pay from an
 * address to an address with a memo, fund an address with a confirmed coin, mine a block,
 * disconnect the tip (a re-org) and connect it again, set the fee rate estimatesmartfee answers. Off unless
 * `createEmulator({ controls: true })` (`npm run devnode` and `npm run demo` turn them on). They
 * live under `/devnode/`, a path no node method uses, on the emulator's own port; JSON in and out.
 *
 * A payment here is what `addTransaction` builds (chain.ts), made as the host's wallet makes it
 * from `sdk.payment({recievers, feemode, message})`: the amount to the receiver, the memo as one
 * OP_RETURN output holding its UTF-8 bytes, the fee taken on top (`exclude`) or out of the amount
 * (`include`).
 *
 * Loopback clients only unless told otherwise, and never a browser: a request with an `Origin`
 * header is refused, so no web page the developer visits can pay or mine on their emulator, cross
 * site or through DNS rebinding. The demo page pays through a route of the demo's own
 * (demo-wallet.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import bs58check from 'bs58check'
import { addressOf, testKey } from './bastyon-host.js'
import type { ChainHistory, ChainOutput, NewTransaction } from './chain.js'

export interface ControlOptions {
  /** Answer clients beyond loopback too (an emulator on a LAN address, for a phone). Default false. */
  remote?: boolean
}

/** Where the controls live: `POST <emulator url>/devnode/pay`, `/devnode/fund`, `/devnode/mine`, `/devnode/disconnect`, `/devnode/reconnect`, `/devnode/feerate`. */
export const CONTROLS_PATH = '/devnode'

/** Pays when a payment names no `from`: a made-up wallet of the emulator's, the same every run. */
export const DEVNODE_WALLET = addressOf(testKey('devnode wallet'))

/** What each payment pays the miner: fixed, since the emulator has no fee market. */
export const PAYMENT_FEE_SAT = 1_000

/** The node's standard limit on an OP_RETURN output's data. */
export const MAX_MEMO_BYTES = 80

/** The emulator is a mainnet node (getnodeinfo's `chain` is `main`): its addresses start with P. */
const MAINNET_ADDRESS_VERSION = 0x37

const MAX_BODY_BYTES = 16 * 1024

export type FeeMode = 'exclude' | 'include'

/** A payment asked of the controls, checked. */
export interface PaymentOrder {
  to: string
  /** What leaves the wallet for the receiver (satoshi); with `include`, the fee comes out of it. */
  amountSat: number
  /** The text of the OP_RETURN output; none when absent. */
  memo?: string
  from: string
  feemode: FeeMode
}

/** A refusal with its HTTP status and a stable code; the message says what to send instead. */
export class ControlError extends Error {
  constructor (readonly status: number, readonly code: string, message: string) {
    super(message)
  }
}

const invalid = (code: string, message: string): ControlError => new ControlError(400, code, message)

const PAYMENT_FIELDS = ['to', 'amountSat', 'memo', 'from', 'feemode']

/** The reason `value` is not an address of the emulator's network, or undefined when it is one. */
function addressProblem (value: unknown): string | undefined {
  if (typeof value !== 'string') return `must be an address as a string, not ${JSON.stringify(value) ?? 'undefined'}`
  let payload: Uint8Array
  try {
    payload = bs58check.decode(value)
  } catch {
    return `${JSON.stringify(value)} is not a Base58Check address (a typo, or not an address at all)`
  }
  if (payload.length !== 21) return `${JSON.stringify(value)} is not an address (it holds ${payload.length} bytes, not 21)`
  if (payload[0] !== MAINNET_ADDRESS_VERSION) {
    return `${JSON.stringify(value)} is an address of another network (version 0x${(payload[0] as number).toString(16)}); the emulator is a mainnet node, whose addresses start with P`
  }
  return undefined
}

/** Checks a body of `POST /devnode/pay`: `{ to, amountSat, memo?, from?, feemode? }`. */
export function parsePaymentOrder (body: unknown): PaymentOrder {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('INVALID_BODY', 'the body must be a JSON object: { "to", "amountSat", "memo"?, "from"?, "feemode"? }')
  const fields = body as Record<string, unknown>
  const unknown = Object.keys(fields).find(name => !PAYMENT_FIELDS.includes(name))
  if (unknown !== undefined) throw invalid('INVALID_BODY', `unknown field ${JSON.stringify(unknown)}: the fields are ${PAYMENT_FIELDS.join(', ')}`)

  const toProblem = addressProblem(fields.to)
  if (toProblem !== undefined) throw invalid('INVALID_ADDRESS', `to: ${toProblem}`)
  const from = fields.from ?? DEVNODE_WALLET
  const fromProblem = addressProblem(from)
  if (fromProblem !== undefined) throw invalid('INVALID_ADDRESS', `from: ${fromProblem}`)

  const feemode = fields.feemode ?? 'exclude'
  if (feemode !== 'exclude' && feemode !== 'include') throw invalid('INVALID_FEEMODE', `feemode must be "exclude" (the fee on top) or "include" (the fee out of the amount), not ${JSON.stringify(feemode)}`)

  const amountSat = fields.amountSat
  if (typeof amountSat !== 'number' || !Number.isSafeInteger(amountSat) || amountSat <= 0 || !Number.isSafeInteger(amountSat + PAYMENT_FEE_SAT)) {
    throw invalid('INVALID_AMOUNT', `amountSat must be a positive whole number of satoshi (a JSON number, at most ${Number.MAX_SAFE_INTEGER - PAYMENT_FEE_SAT}), not ${JSON.stringify(amountSat) ?? 'undefined'}`)
  }
  if (feemode === 'include' && amountSat <= PAYMENT_FEE_SAT) throw invalid('INVALID_AMOUNT', `with feemode "include" the fee (${PAYMENT_FEE_SAT} satoshi) comes out of amountSat, which must be more than it (got ${amountSat})`)

  const memo = fields.memo
  if (memo !== undefined) {
    if (typeof memo !== 'string') throw invalid('INVALID_MEMO', `memo must be text, not ${JSON.stringify(memo)}`)
    const bytes = Buffer.byteLength(memo, 'utf8')
    if (bytes === 0 || bytes > MAX_MEMO_BYTES) throw invalid('INVALID_MEMO', `memo must be 1 to ${MAX_MEMO_BYTES} bytes of UTF-8 (got ${bytes}); leave it out for a payment without one`)
  }
  return { to: fields.to as string, amountSat, ...(memo === undefined ? {} : { memo }), from: from as string, feemode }
}

/** The transaction the host's wallet would send for `order`, for ChainHistory.addTransaction. */
export function paymentTransaction (order: PaymentOrder): NewTransaction {
  const received = order.feemode === 'exclude' ? order.amountSat : order.amountSat - PAYMENT_FEE_SAT
  const outputs: ChainOutput[] = [{ address: order.to, amount: received }]
  if (order.memo !== undefined) outputs.push({ memo: Buffer.from(order.memo, 'utf8').toString('hex'), amount: 0 })
  return { txType: 1, inputs: [{ address: order.from, amount: received + PAYMENT_FEE_SAT }], outputs }
}

/** Checks a body of `POST /devnode/fund`: `{ address, amountSat }`. */
export function parseFundOrder (body: unknown): { address: string, amountSat: number } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('INVALID_BODY', 'the body must be a JSON object: { "address", "amountSat" }')
  const fields = body as Record<string, unknown>
  const unknown = Object.keys(fields).find(name => name !== 'address' && name !== 'amountSat')
  if (unknown !== undefined) throw invalid('INVALID_BODY', `unknown field ${JSON.stringify(unknown)}: the fields are address, amountSat`)
  const problem = addressProblem(fields.address)
  if (problem !== undefined) throw invalid('INVALID_ADDRESS', `address: ${problem}`)
  const amountSat = fields.amountSat
  if (typeof amountSat !== 'number' || !Number.isSafeInteger(amountSat) || amountSat <= 0) {
    throw invalid('INVALID_AMOUNT', `amountSat must be a positive whole number of satoshi (a JSON number), not ${JSON.stringify(amountSat) ?? 'undefined'}`)
  }
  return { address: fields.address as string, amountSat }
}

/**
 * Pays `amountSat` to `address` from the emulator's wallet (output 0), in a block mined at once with
 * whatever else is pending: a confirmed coin that txunspent lists and sendrawtransaction can spend.
 */
export function fundAddress (chain: ChainHistory, address: string, amountSat: number): { txid: string, vout: number, amountSat: number, height: number, hash: string } {
  const { txid } = chain.addTransaction({ txType: 1, inputs: [{ address: DEVNODE_WALLET, amount: amountSat + PAYMENT_FEE_SAT }], outputs: [{ address, amount: amountSat }] })
  const block = chain.mine()
  return { txid, vout: 0, amountSat, height: block.height, hash: block.hash }
}

/** Checks a body of `POST /devnode/feerate`: `{ satPerKb }`, a whole number or null. */
function parseFeeRate (body: unknown): number | null {
  const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? body as Record<string, unknown> : undefined
  if (fields === undefined || Object.keys(fields).some(name => name !== 'satPerKb') || !('satPerKb' in fields)) throw invalid('INVALID_BODY', 'the body must be { "satPerKb": <satoshi per 1,000 bytes, or null for no estimate> }')
  const rate = fields.satPerKb
  if (rate !== null && (typeof rate !== 'number' || !Number.isSafeInteger(rate) || rate < 0)) throw invalid('INVALID_FEE_RATE', `satPerKb must be a whole number of satoshi per 1,000 bytes from 0, or null, not ${JSON.stringify(rate)}`)
  return rate as number | null
}

/** Whether a socket's remote address is this machine's loopback (IPv4, IPv6, or IPv4 mapped in IPv6). */
export function isLoopback (address: string | undefined): boolean {
  if (address === undefined) return false
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)
}

function send (response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' })
  response.end(text)
}

async function readBody (request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  // Read to the end even past the limit: closing on unread data would reset the connection
  // before the client reads the refusal.
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer)
  }
  if (size > MAX_BODY_BYTES) throw new ControlError(413, 'BODY_TOO_LARGE', `a control's body is at most ${MAX_BODY_BYTES} bytes, not ${size}`)
  return Buffer.concat(chunks).toString('utf8')
}

/** The JSON body; an empty body is `{}` (mine and disconnect need none). */
async function jsonBody (request: IncomingMessage): Promise<unknown> {
  const text = await readBody(request)
  if (text.trim() === '') return {}
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/json') throw new ControlError(415, 'UNSUPPORTED_MEDIA_TYPE', `send the body as JSON, with content-type: application/json (got ${JSON.stringify(request.headers['content-type'] ?? '')})`)
  try {
    return JSON.parse(text)
  } catch {
    throw invalid('INVALID_JSON', 'the body is not JSON')
  }
}

/** Mine and disconnect take nothing: any field is a mistake worth saying. */
function expectNothing (body: unknown, action: string): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Object.keys(body).length > 0) {
    throw invalid('INVALID_BODY', `${action} takes no fields: send no body, or {}`)
  }
}

type Action = (body: unknown) => unknown

export interface Controls {
  /** Whether `url` is one of the controls' (anything under /devnode/), which `handle` then answers. */
  owns (url: string | undefined): boolean
  handle (request: IncomingMessage, response: ServerResponse): Promise<void>
}

/** What the controls change beyond the chain. */
export interface ControlHooks {
  setFeeRate (feeRatePerKb: number | null): void
}

export function createControls (chain: ChainHistory, options: ControlOptions = {}, hooks?: ControlHooks): Controls {
  const actions: Record<string, Action> = {
    pay (body) {
      return { txid: chain.addTransaction(paymentTransaction(parsePaymentOrder(body))).txid }
    },
    fund (body) {
      const order = parseFundOrder(body)
      return fundAddress(chain, order.address, order.amountSat)
    },
    feerate (body) {
      const satPerKb = parseFeeRate(body)
      if (hooks === undefined) throw new ControlError(404, 'NOT_FOUND', 'this emulator takes no fee rate')
      hooks.setFeeRate(satPerKb)
      return { satPerKb }
    },
    mine (body) {
      expectNothing(body, 'mine')
      const block = chain.mine()
      return { height: block.height, hash: block.hash }
    },
    disconnect (body) {
      expectNothing(body, 'disconnect')
      let block
      try {
        block = chain.disconnectTip()
      } catch (err) {
        // Only the block the chain started at is refused.
        throw new ControlError(409, 'CANNOT_DISCONNECT', `${(err as Error).message}: mine a block first`)
      }
      return {
        height: chain.tip.height,
        hash: chain.tip.hash,
        disconnected: { height: block.height, hash: block.hash, txids: block.transactions.map(transaction => transaction.txid) },
      }
    },
    reconnect (body) {
      expectNothing(body, 'reconnect')
      let block
      try {
        block = chain.reconnectTip()
      } catch (err) {
        throw new ControlError(409, 'CANNOT_RECONNECT', (err as Error).message)
      }
      return { height: block.height, hash: block.hash }
    },
  }

  function actionOf (url: string): Action | undefined {
    const name = new URL(url, 'http://emulator').pathname.slice(CONTROLS_PATH.length + 1)
    return Object.hasOwn(actions, name) ? actions[name] : undefined
  }

  async function answer (request: IncomingMessage): Promise<unknown> {
    if (!options.remote && !isLoopback(request.socket.remoteAddress)) {
      throw new ControlError(403, 'LOOPBACK_ONLY', 'the emulator\'s controls answer this machine only (DEVNODE_CONTROLS=any to answer others)')
    }
    if (request.headers.origin !== undefined) {
      throw new ControlError(403, 'BROWSER_REFUSED', 'the emulator\'s controls answer no browser: call them from a program or curl (the demo page pays through the demo\'s own route)')
    }
    const action = actionOf(request.url ?? '/')
    if (action === undefined) throw new ControlError(404, 'NOT_FOUND', `no control at ${new URL(request.url ?? '/', 'http://emulator').pathname}: POST ${CONTROLS_PATH}/pay, ${CONTROLS_PATH}/fund, ${CONTROLS_PATH}/mine, ${CONTROLS_PATH}/disconnect, ${CONTROLS_PATH}/reconnect or ${CONTROLS_PATH}/feerate`)
    if (request.method !== 'POST') throw new ControlError(405, 'METHOD_NOT_ALLOWED', 'the controls take POST only')
    return action(await jsonBody(request))
  }

  return {
    owns: url => url !== undefined && (url === CONTROLS_PATH || url.startsWith(`${CONTROLS_PATH}/`) || url.startsWith(`${CONTROLS_PATH}?`)),
    async handle (request, response) {
      try {
        send(response, 200, await answer(request))
      } catch (err) {
        if (!(err instanceof ControlError)) throw err
        send(response, err.status, { error: { code: err.code, message: err.message } })
      }
    },
  }
}
