/**
 * One WebSocket to one node (docs/node-events.md, "The node's WebSocket"): open it, register one
 * watched address, keep it alive with the node's `0` → `1`, and tell the owner about each block
 * the node announces. A socket that does not register in time, or that goes silent (no answer to
 * the keep-alive), is cut and reported lost: a stalled node looks exactly like that.
 *
 * Its states, one socket's from its opening to its end (the socket keeper, socket-keeper.ts, has
 * its own, across the sockets it opens one after another):
 * - `registering`: opened; the watched address is sent once the connection is up, and the node's
 *   `Registered` awaited for `connectTimeoutMs`;
 * - `registered`: the node pushes its blocks; `0` goes out every `pingIntervalMs`, and a socket
 *   silent for `silenceTimeoutMs` is cut;
 * - `ended`: lost (told once to `onLost`) or closed by its owner (told to no one). Nothing after.
 *
 * Timers and the clock are injected, so tests move time by hand.
 */
import { WebSocket, type RawData } from 'ws'
import type { TimerHandle, Timers } from '../timers.js'
import { NodeEventError } from './errors.js'
import { readNodeMessage, type AnnouncedBlock } from './node-messages.js'

/** The node's messages are small; anything this big is not one of them. */
const MAX_MESSAGE_BYTES = 1024 * 1024

export interface NodeSocketOptions {
  url: string
  /** The node in messages ("node 2"), never its URL. */
  node: string
  /** The address registered: the node pushes blocks to every registered socket, whatever it watches. */
  watchAddress: string
  timers: Timers
  clock: () => number
  /** From opening to the node's `Registered`. */
  connectTimeoutMs: number
  /** How often `0` is sent once registered. */
  pingIntervalMs: number
  /** Silence after which the socket is taken for dead. */
  silenceTimeoutMs: number
  onRegistered (): void
  onNewBlock (block: AnnouncedBlock): void
  /** A frame that could not be read; the socket stays. */
  onBadMessage (err: NodeEventError): void
  /** Once, when the socket failed to register or was lost; never after close(). */
  onLost (err: NodeEventError): void
  /** After each keep-alive, for the owner's own checks. */
  onTick? (): void
}

/** Why a connection failed, in words that carry no address (the errors of node:net and ws name the host). */
function failure (err: Error & { code?: string }): string {
  const status = /Unexpected server response: (\d+)/.exec(err.message)
  if (status !== null) return `the upgrade was answered HTTP ${status[1]}`
  return err.code ?? 'a WebSocket error'
}

export type NodeSocketState = 'registering' | 'registered' | 'ended'

export class NodeSocket {
  readonly #options: NodeSocketOptions
  readonly #socket: WebSocket
  #state: NodeSocketState = 'registering'
  #timer: TimerHandle | undefined
  #lastHeardAt: number

  constructor (options: NodeSocketOptions) {
    this.#options = options
    this.#lastHeardAt = options.clock()
    // First, so that a URL the client refuses throws before anything is left running.
    const socket = this.#socket = new WebSocket(options.url, { maxPayload: MAX_MESSAGE_BYTES, perMessageDeflate: false, followRedirects: false })
    this.#timer = options.timers.setTimeout(() => this.#lose(`${options.node} did not register the socket within ${options.connectTimeoutMs} ms`), options.connectTimeoutMs)
    socket.on('open', () => {
      // The node checks only that `nonce` is present: no signature is asked for.
      socket.send(JSON.stringify({ addr: options.watchAddress, nonce: '0' }))
    })
    socket.on('message', (data, isBinary) => this.#onMessage(data, isBinary))
    socket.on('error', err => this.#lose(`${options.node}'s WebSocket failed: ${failure(err)}`, err))
    socket.on('close', code => this.#lose(`${options.node} closed the WebSocket (code ${code})`))
  }

  get state (): NodeSocketState {
    return this.#state
  }

  /** Cuts the socket without reporting it lost. Idempotent. */
  close (): void {
    if (this.#state === 'ended') return
    this.#state = 'ended'
    this.#end()
  }

  #onMessage (data: RawData, isBinary: boolean): void {
    if (this.#state === 'ended') return
    this.#lastHeardAt = this.#options.clock()
    if (isBinary) return
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8')
    let message
    try {
      message = readNodeMessage(text)
    } catch (err) {
      this.#options.onBadMessage(err as NodeEventError)
      return
    }
    switch (message.kind) {
      case 'registered':
        if (this.#state !== 'registering') return
        this.#state = 'registered'
        this.#schedulePing()
        this.#options.onRegistered()
        return
      case 'refused':
        // Only a refused registration matters; later replies answer nothing we sent.
        if (this.#state === 'registering') this.#lose(`${this.#options.node} refused the registration (${message.result})`)
        return
      case 'new-block':
        if (this.#state === 'registered') this.#options.onNewBlock(message.block)
    }
  }

  #schedulePing (): void {
    const { timers, pingIntervalMs } = this.#options
    timers.clearTimeout(this.#timer)
    this.#timer = timers.setTimeout(() => this.#ping(), pingIntervalMs)
  }

  #ping (): void {
    if (this.#state !== 'registered') return
    const silentMs = this.#options.clock() - this.#lastHeardAt
    if (silentMs >= this.#options.silenceTimeoutMs) {
      this.#lose(`${this.#options.node}'s WebSocket was silent for ${Math.round(silentMs)} ms`)
      return
    }
    this.#socket.send('0')
    this.#schedulePing()
    this.#options.onTick?.()
  }

  #lose (message: string, cause?: unknown): void {
    if (this.#state === 'ended') return
    this.#state = 'ended'
    this.#end()
    this.#options.onLost(new NodeEventError('EVENTS_ERR_SOCKET', message, { node: this.#options.node, ...(cause === undefined ? {} : { cause }) }))
  }

  #end (): void {
    this.#options.timers.clearTimeout(this.#timer)
    this.#timer = undefined
    this.#socket.removeAllListeners('message')
    // An error after the end (a late handshake failure) must not go unhandled.
    this.#socket.on('error', () => {})
    this.#socket.terminate()
  }
}
