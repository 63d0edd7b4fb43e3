/**
 * Imported first by each of `npm test`'s test processes (scripts/test.ts), which run many files
 * in one process. node:test keeps every test, and the `after` hooks it ran, until the process
 * ends: a hook such as `t.after(() => app.close())` then keeps that app alive, with everything it
 * holds, for the rest of the run, and every later garbage collection walks them all (a process's
 * heap grew to 340 MB after 200 tests; bench/results.md, "Where the suite's CPU goes"). Each hook
 * here lets go of its function once it has run.
 *
 * TestContext is not exported, so its prototype is taken from the first test's context. Should a
 * later Node.js name or shape it otherwise, nothing is changed: the suite only costs more.
 */
import { beforeEach } from 'node:test'

type After = (this: unknown, fn: (...args: unknown[]) => unknown, options?: unknown) => unknown

const patched = new WeakSet<object>()

beforeEach((t) => {
  const context = Object.getPrototypeOf(t) as { after?: After } | null
  if (context === null || patched.has(context) || typeof context.after !== 'function') return
  patched.add(context)
  const after = context.after
  context.after = function (fn, options) {
    let pending: typeof fn | undefined = fn
    return after.call(this, function (this: unknown, ...args: unknown[]) {
      const run = pending
      pending = undefined
      return run?.apply(this, args)
    }, options)
  }
})
