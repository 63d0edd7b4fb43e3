/**
 * How a cluster worker learns it should shut down. The primary asks over the cluster's IPC
 * channel, not with a signal: Ctrl+C (and a stop that signals a whole cgroup) already delivers
 * SIGINT or SIGTERM to every process of the group, so a worker that counted signals, as
 * close-with-grace does, would take the primary's forwarded request for a second signal and
 * drop its requests in flight. In a worker, the IPC request, SIGTERM and SIGINT all start the one
 * graceful close and later ones change nothing; exiting at once on a second signal is the
 * primary's call (it kills every worker).
 */
export const SHUTDOWN_MESSAGE = { cmd: 'bastyon-miniapp:shutdown' } as const

/** The signals a worker takes as a shutdown request; close-with-grace must skip them there. */
export const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const

/** Who asked: the primary over IPC, or a signal sent to the worker itself. */
export type ShutdownRequester = 'primary' | (typeof SHUTDOWN_SIGNALS)[number]

export class ShutdownRequests {
  #requested: ShutdownRequester | undefined
  #close: ((requester: ShutdownRequester) => void) | undefined

  /** Listens from the start: a request can come while the app is still being built. */
  constructor () {
    process.on('message', message => {
      if ((message as { cmd?: unknown } | null)?.cmd === SHUTDOWN_MESSAGE.cmd) this.#request('primary')
    })
    for (const signal of SHUTDOWN_SIGNALS) process.on(signal, () => this.#request(signal))
  }

  /** Calls `close` on the first request: now if one came already. */
  handleWith (close: (requester: ShutdownRequester) => void): void {
    this.#close = close
    if (this.#requested !== undefined) close(this.#requested)
  }

  #request (requester: ShutdownRequester): void {
    if (this.#requested !== undefined) return
    this.#requested = requester
    this.#close?.(requester)
  }
}
