/**
 * Waits until `condition()` holds, checking after each turn of the event loop's timers: for
 * state that changes in the background (a health probe, a refresh), where no event is exposed.
 * Fails with `what` after `timeoutMs`.
 */
export async function waitFor (what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}
