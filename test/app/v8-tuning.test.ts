import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { describe, it } from 'node:test'

const TUNING = new URL('../../src/v8-tuning.ts', import.meta.url).href

/**
 * Runs in a child process: V8's natives syntax tells whether two objects share a hidden class,
 * `gc()` runs full collections, and Node's internals tell whether an async init hook is left on.
 */
const CHILD = `
import { createHook } from 'node:async_hooks'
import { createRequire } from 'node:module'
const { keepTickShape } = await import(${JSON.stringify(TUNING)})
// Held weakly here: the module must keep it.
const keptRef = new WeakRef(keepTickShape())
const same = keptRef.deref() === keepTickShape()
const initHooksLeft = createRequire(import.meta.url)('internal/async_hooks').initHooksExist()
// Full collections from a timer, with no entry queued: those are the ones that drop the shape.
await new Promise(resolve => setTimeout(resolve, 0))
for (let i = 0; i < 4; i++) globalThis.gc()
const kept = keptRef.deref()
let fresh
const hook = createHook({ init (_id, type, _trigger, resource) { if (type === 'TickObject') fresh ??= resource } }).enable()
process.nextTick(() => {})
hook.disable()
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)')
console.log(JSON.stringify({
  same,
  isQueueEntry: typeof kept?.callback === 'function' && 'args' in kept,
  initHooksLeft,
  sameShapeAfterGc: haveSameMap(kept, fresh),
  freshDiffersFromPlain: !haveSameMap({ callback () {}, args: undefined }, fresh),
}))
`

describe('V8 tuning', () => {
  it('keeps one real nextTick queue entry alive, whose shape later entries still share after full collections', () => {
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--expose-gc', '--allow-natives-syntax', '--expose-internals', '--input-type=module', '-e', CHILD], { encoding: 'utf8' })
    assert.deepEqual(JSON.parse(output.trim().split('\n').at(-1) as string), {
      same: true,
      isQueueEntry: true,
      initHooksLeft: false,
      sameShapeAfterGc: true,
      freshDiffersFromPlain: true,
    })
  })
})
