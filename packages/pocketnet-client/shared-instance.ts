/**
 * One shared client per process, created on first use.
 *
 * The creation promise is cached (not the client), so concurrent first callers share one
 * creation; a failed creation is forgotten, so the next call tries again.
 */
import { PocketNetProxyApi } from './client.js'
import type { ClientOptions } from './options.js'

export interface SharedInstance {
  /** The client, created on the first call. */
  get (): Promise<PocketNetProxyApi>
  /** The client if it was created, without creating it. */
  peek (): PocketNetProxyApi | undefined
  /** Closes the client if there is one; the next `get()` creates a new one. */
  close (): Promise<void>
}

export function createSharedInstance (options: ClientOptions = {}, create = PocketNetProxyApi.create): SharedInstance {
  let creation: Promise<PocketNetProxyApi> | undefined
  let client: PocketNetProxyApi | undefined
  return {
    get () {
      if (creation === undefined) {
        const attempt: Promise<PocketNetProxyApi> = create(options).then(
          created => { client = created; return created },
          err => {
            if (creation === attempt) creation = undefined
            throw err
          })
        creation = attempt
      }
      return creation
    },
    peek: () => client,
    async close () {
      const pending = creation
      creation = undefined
      client = undefined
      const created = await pending?.catch(() => undefined)
      await created?.close()
    },
  }
}

let processInstance: SharedInstance | undefined

/**
 * The process-wide client, created on first use with `options` (later calls' options are
 * ignored) and reused by every later call.
 * @example const api = await getPocketNetProxyInstance(); await api.rpc.getnodeinfo()
 */
export function getPocketNetProxyInstance (options?: ClientOptions): Promise<PocketNetProxyApi> {
  processInstance ??= createSharedInstance(options)
  return processInstance.get()
}

/** Closes the process-wide client; the next {@link getPocketNetProxyInstance} creates a new one. */
export async function closePocketNetProxyInstance (): Promise<void> {
  const instance = processInstance
  processInstance = undefined
  await instance?.close()
}
