/**
 * PGlite's Node file system (its data directory on disk), reporting when the WebAssembly
 * PostgreSQL aborts. A PANIC (such as `could not write to file "pg_wal/xlogtemp…": No space left
 * on device`, a full disk while the write-ahead log grows) aborts it: PGlite swallows the abort,
 * and the next call into it can spin on the main thread for ever. Emscripten calls the module's
 * `onAbort` at that moment, before anything else runs; a file system is where PGlite lets its
 * user amend the module's options.
 */
import { NodeFS } from '@electric-sql/pglite/nodefs'

type PGliteOfFs = Parameters<NodeFS['init']>[0]
type ModuleOptions = Parameters<NodeFS['init']>[1]

export class AbortReportingNodeFS extends NodeFS {
  readonly #onAbort: (what: unknown) => void

  constructor (dataDir: string, onAbort: (what: unknown) => void) {
    super(dataDir)
    this.#onAbort = onAbort
  }

  override async init (pg: PGliteOfFs, options: ModuleOptions): ReturnType<NodeFS['init']> {
    const chained = options.onAbort
    return await super.init(pg, {
      ...options,
      onAbort: (what: unknown) => {
        this.#onAbort(what)
        chained?.(what)
      },
    })
  }
}
