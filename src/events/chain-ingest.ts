/**
 * This instance ingesting the chain for the hub: pocketnet-client's node event source (one node
 * WebSocket, at most two calls per block), started and stopped as the ingest lease's state says
 * (plugin.ts), or for good without REDIS_URL. A source started after another instance's (a lease
 * taken over, or unreachable) resumes from the last block heard here, or from the last one the holders noted in
 * Redis (resume-block.ts): the blocks since are read back (up to the source's maxCatchUpBlocks)
 * instead of starting at the tip, so that a hand-over loses no block.
 *
 * The counters of the sources stopped are kept, so that the metrics count since the start.
 */
import { createNodeEventSource, type BlockPosition, type NodeEventError, type NodeEventSource, type NodeEventSourceStats, type PocketNetProxyApi } from 'pocketnet-client'
import type { EventHub } from './hub.js'

/** How long the ingest waits to try again when no node answered at its start. */
const INGEST_RETRY_MS = 30_000

export interface ChainIngestOptions {
  hub: EventHub
  /** The shared client (`app.pocketnet.get`). */
  client: () => Promise<PocketNetProxyApi>
  /** Where a source started now resumes: undefined starts at the tip. */
  resumeFrom: () => Promise<BlockPosition | undefined>
  /** Each block the source reports (the lease notes it for the next holder). */
  onBlock?: (block: BlockPosition) => void
  onError: (err: NodeEventError) => void
  /** No node answered at the start: tried again after INGEST_RETRY_MS. */
  onNoNode: (err: Error, retryMs: number) => void
}

type Counter = 'socketsOpened' | 'reconnects' | 'socketFailures' | 'blockCalls' | 'notificationCalls' | 'portLookups' | 'skippedBlocks' | 'badMessages'
const COUNTERS: Counter[] = ['socketsOpened', 'reconnects', 'socketFailures', 'blockCalls', 'notificationCalls', 'portLookups', 'skippedBlocks', 'badMessages']
type Counts = Pick<NodeEventSourceStats, Counter | 'emitted' | 'reorgsFound'>

const noCounts = (): Counts => ({
  ...Object.fromEntries(COUNTERS.map(counter => [counter, 0])) as Record<Counter, number>,
  emitted: { block: 0, reorg: 0, transaction: 0, notification: 0 },
  reorgsFound: { resume: 0, 'node-report': 0, 'new-blocks': 0 },
})

/** Adds `more`'s counters to `into`'s. */
function addUp (into: Counts, more: Counts): void {
  for (const counter of COUNTERS) into[counter] += more[counter]
  for (const kind of Object.keys(more.emitted) as Array<keyof Counts['emitted']>) into.emitted[kind] += more.emitted[kind]
  for (const cause of Object.keys(more.reorgsFound) as Array<keyof Counts['reorgsFound']>) into.reorgsFound[cause] += more.reorgsFound[cause]
}

export class ChainIngest {
  readonly #options: ChainIngestOptions
  #source: NodeEventSource | undefined
  /** Bumped by each start and stop: a start still waiting for the client gives up when it changed. */
  #generation = 0
  #wanted = false
  #retry: NodeJS.Timeout | undefined
  /** The counters of the sources stopped. */
  readonly #stopped = noCounts()

  /** Sources started since the start of the process. */
  started = 0

  constructor (options: ChainIngestOptions) {
    this.#options = options
  }

  /** Whether a source ingests the chain now. */
  get running (): boolean {
    return this.#source !== undefined
  }

  /** Ingests the chain, once the client exists; while no node answers, tries again later. Idempotent. */
  start (): void {
    if (this.#wanted) return
    this.#wanted = true
    const generation = ++this.#generation
    this.#begin(generation)
  }

  /** Stops ingesting the chain; resolves once the source is closed. Idempotent. */
  async stop (): Promise<void> {
    this.#wanted = false
    this.#generation++
    clearTimeout(this.#retry)
    const source = this.#source
    this.#source = undefined
    if (source === undefined) return
    addUp(this.#stopped, source.stats())
    await source.close()
  }

  /** The current source's state, with the counters of every source since the start (undefined before the first). */
  stats (): NodeEventSourceStats | undefined {
    const current = this.#source?.stats()
    if (current === undefined && this.started === 0) return undefined
    const merged = current ?? { socket: 'closed', node: undefined, polling: false, catchingUp: false, height: undefined, blockHash: undefined, ...noCounts() }
    addUp(merged, this.#stopped)
    return merged
  }

  #begin (generation: number): void {
    const { client, resumeFrom, hub, onError, onNoNode, onBlock } = this.#options
    client().then(async api => {
      const resume = await resumeFrom().catch(() => undefined)
      if (generation !== this.#generation) return
      this.started++
      this.#source = createNodeEventSource({
        api,
        onEvent: event => {
          hub.ingest(event)
          if (event.kind === 'block') onBlock?.({ height: event.height, blockHash: event.blockHash })
        },
        onError,
        addressesOfInterest: () => hub.interests.addresses(),
        contentOfInterest: () => hub.interests.contents(),
        ...(resume === undefined ? {} : { resumeFrom: resume }),
      })
    }, (err: Error) => {
      if (generation !== this.#generation) return
      onNoNode(err, INGEST_RETRY_MS)
      this.#retry = setTimeout(() => { if (generation === this.#generation) this.#begin(generation) }, INGEST_RETRY_MS).unref()
    })
  }
}
