/**
 * A statement with parameters sent to PGlite in one call into its WebAssembly module, where
 * `pglite.query()` makes six (Parse, Describe statement, Bind, Describe portal, Execute, Sync,
 * each a call of its own): each call costs about as much as a small statement, and the calls were
 * most of a storage GET's time (bench/results.md, "The embedded database in one exchange per
 * statement", has the figures).
 *
 * Each distinct SQL text is parsed once, as a named prepared statement of the session, whose
 * parameter types one Describe tells; from then on a call is Bind + Describe portal + Execute +
 * Sync in one buffer. Parameters are serialized by those types with PGlite's own serializers and
 * rows parsed with its own parsers, so values go in and come out exactly as through `query()`.
 * Prepared statements of the protocol outlive the transaction that made them, even rolled back.
 *
 * This leans on PGlite's public but low-level `execProtocolStream`, `protocol.serialize` and
 * `parse.parseResults`: test/db/extended-query.test.ts pins what is relied on, so that an upgrade
 * that changes it fails there.
 */
import { type PGlite, type Results, messages, parse, protocol } from '@electric-sql/pglite'

const { serialize } = protocol

/** Prepared statements kept at most; beyond, the least recently prepared one is closed. */
export const MAX_PREPARED_STATEMENTS = 500

/** feature_not_supported, as "cached plan must not change result type" after a schema change. */
const PLAN_CHANGED = '0A000'

interface Prepared {
  name: string
  /** The type of each parameter, as the server inferred it. */
  types: number[]
}

/** The error as `pglite.query()` throws it: the server's, naming the statement it failed. */
function asQueryError (error: unknown, text: string, params: unknown[]): unknown {
  if (error instanceof messages.DatabaseError) Object.assign(error, { query: text, params, queryOptions: undefined })
  return error
}

function concat (parts: Uint8Array[]): Uint8Array {
  let length = 0
  for (const part of parts) length += part.length
  const joined = new Uint8Array(length)
  let offset = 0
  for (const part of parts) {
    joined.set(part, offset)
    offset += part.length
  }
  return joined
}

/**
 * Runs statements with parameters on `pglite`. The caller lets one call in at a time (the
 * embedded database's queue), as PGlite needs: `execProtocolStream` takes none of its locks.
 */
export class ExtendedQuery {
  readonly #pglite: PGlite
  readonly #prepared = new Map<string, Prepared>()
  /** Closes of statements dropped from the map, sent ahead of the next Parse. */
  #toClose: Uint8Array[] = []
  #named = 0
  readonly #syncFiles: boolean

  /**
   * @param options.syncFiles whether to have PGlite sync its file system after each statement, as
   *   `pglite.query()` does. Default true; false only where that sync does nothing (the embedded
   *   database's files on disk: embedded-database.ts).
   */
  constructor (pglite: PGlite, options: { syncFiles?: boolean } = {}) {
    this.#pglite = pglite
    this.#syncFiles = options.syncFiles ?? true
  }

  /** What `pglite.query(text, params)` answers, in one call into the module (two the first time). */
  async query<Row>(text: string, params: unknown[]): Promise<Results<Row>> {
    const known = this.#prepared.get(text)
    try {
      return await this.#run<Row>(known ?? await this.#prepare(text), params)
    } catch (error) {
      // A schema changed under a prepared statement: parsed again once, outside a transaction
      // (inside, the failed statement aborted it: the caller's work fails, the next call parses).
      if (known === undefined || (error as { code?: unknown }).code !== PLAN_CHANGED) throw asQueryError(error, text, params)
      this.#forget(text)
      if (this.#pglite.isInTransaction()) throw asQueryError(error, text, params)
      try {
        return await this.#run<Row>(await this.#prepare(text), params)
      } catch (again) {
        throw asQueryError(again, text, params)
      }
    }
  }

  async #prepare (text: string): Promise<Prepared> {
    if (this.#prepared.size >= MAX_PREPARED_STATEMENTS) this.#forget(this.#prepared.keys().next().value as string)
    const name = `s${++this.#named}`
    const message = concat([...this.#toClose, serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()])
    this.#toClose = []
    // Parsing writes nothing: no sync of the files, as pglite.query() does not after its Parse.
    const answer = await this.#pglite.execProtocolStream(message, { syncToFs: false })
    const description = answer.find((message): message is messages.ParameterDescriptionMessage => message.name === 'parameterDescription')
    const prepared = { name, types: description?.dataTypeIDs ?? [] }
    this.#prepared.set(text, prepared)
    return prepared
  }

  #forget (text: string): void {
    const prepared = this.#prepared.get(text)
    if (prepared === undefined) return
    this.#prepared.delete(text)
    this.#toClose.push(serialize.close({ type: 'S', name: prepared.name }))
  }

  async #run<Row>(prepared: Prepared, params: unknown[]): Promise<Results<Row>> {
    const { serializers, parsers } = this.#pglite
    const values = params.map((param, i) => {
      if (param === null || param === undefined) return null
      const serializer = serializers[prepared.types[i] as number]
      return serializer === undefined ? String(param) : serializer(param)
    })
    const message = concat([
      serialize.bind({ statement: prepared.name, values }),
      serialize.describe({ type: 'P' }),
      serialize.execute(),
      serialize.sync(),
    ])
    // The Sync is in the buffer: after an error the server skips to it, and the session is ready
    // for the next statement. The files are synced after it, as pglite.query() does, unless that
    // sync does nothing.
    const answer = await this.#pglite.execProtocolStream(message, { syncToFs: this.#syncFiles })
    return parse.parseResults(answer, parsers)[0] as Results<Row>
  }
}
