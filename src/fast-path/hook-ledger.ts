/**
 * Which request hooks each Fastify context has, so that the fast path can refuse, at start-up,
 * to replay a route that a hook it does not reproduce would see (an auth check, a header per
 * user, a log line): a replayed answer runs no hook at all.
 *
 * Fastify offers no public way to list the hooks a route will run. The ledger wraps `addHook` on
 * the root instance before any plugin is registered; every encapsulated context is made from the
 * root by `Object.create` and so inherits the wrapper, and `this` in it is the context that gets
 * the hook. A route's hooks are then the ones noted on its context and on the contexts above it,
 * plus the route's own options. test/fast-path/replay-safety.test.ts guards this: a hook added at
 * the root, in a plugin's context or on the route must each stop the start-up, so a Fastify
 * release that bypassed the wrapper would fail that test rather than let a route be replayed
 * unchecked.
 *
 * Hooks whose effect the fast path does reproduce (it counts the rate limit, adds the request
 * id, replays the recorded headers, counts the metrics) are marked with {@link mirroredByReplay},
 * or, for a third-party plugin's hooks (CORS: its headers are recorded per Origin, which the
 * answer varies by), registered inside {@link HookLedger.trusting}.
 */
import type { FastifyInstance, RouteOptions } from 'fastify'

/** The hooks on the way of a successful GET; a replayed answer runs none of them. */
export const SKIPPED_BY_REPLAY = ['onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend', 'onResponse'] as const
type SkippedHook = typeof SKIPPED_BY_REPLAY[number]

/** Hooks of every signature. */
type Hook = Function

const mirrored = new WeakSet<Hook>()

/** Marks `hook` as one whose effect the fast path reproduces on a replayed answer; returns it. */
export function mirroredByReplay<H extends Hook> (hook: H): H {
  mirrored.add(hook)
  return hook
}

/** A hook the fast path would skip: its kind, and its name for the error message. */
export interface UnmirroredHook {
  kind: SkippedHook
  name: string
}

function unmirrored (kind: SkippedHook, hook: Hook): UnmirroredHook {
  return { kind, name: hook.name === '' ? 'anonymous' : hook.name }
}

export class HookLedger {
  /** Per context, the hooks added to it that the fast path does not reproduce. */
  readonly #unmirrored = new WeakMap<object, UnmirroredHook[]>()
  #trusting = 0

  /** Wraps `app.addHook`; call it on the root instance before registering anything. */
  install (app: FastifyInstance): void {
    const addHook = app.addHook as unknown as (this: FastifyInstance, name: string, hook: Hook) => FastifyInstance
    const note = (context: object, name: string, hook: Hook): void => {
      if (this.#trusting > 0 || mirrored.has(hook) || !(SKIPPED_BY_REPLAY as readonly string[]).includes(name)) return
      const list = this.#unmirrored.get(context) ?? []
      list.push(unmirrored(name as SkippedHook, hook))
      this.#unmirrored.set(context, list)
    }
    app.addHook = function (this: FastifyInstance, name: string, hook: Hook) {
      note(this, name, hook)
      return addHook.call(this, name, hook)
    } as unknown as FastifyInstance['addHook']
  }

  /**
   * Registers a third-party plugin whose request hooks the fast path reproduces. Plugins load
   * one at a time, so every hook added while `register` runs is that plugin's.
   */
  async trusting (register: () => PromiseLike<unknown>): Promise<void> {
    this.#trusting++
    try {
      await register()
    } finally {
      this.#trusting--
    }
  }

  /** The hooks a route of `context` with `route`'s options would run that a replay would skip. */
  unmirroredHooks (context: object, route: RouteOptions): UnmirroredHook[] {
    const found: UnmirroredHook[] = []
    for (let level: object | null = context; level !== null; level = Object.getPrototypeOf(level)) {
      found.push(...(this.#unmirrored.get(level) ?? []))
    }
    for (const kind of SKIPPED_BY_REPLAY) {
      for (const hook of [route[kind] ?? []].flat() as Hook[]) {
        if (!mirrored.has(hook)) found.push(unmirrored(kind, hook))
      }
    }
    return found
  }
}
