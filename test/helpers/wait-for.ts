/**
 * Waits until `condition()` holds (or resolves true), checking after each turn of the event
 * loop's timers: for state that changes in the background (a health probe, a refresh, another
 * process), where no event is exposed.
 * The timeout only turns a hang into a failure with `what` in it; it is no bound on how fast
 * anything must be, and tests that care about time move an injected clock instead.
 */
export async function waitFor (what: string, condition: () => boolean | Promise<boolean>, hangAfterMs = 30_000): Promise<void> {
  const deadline = performance.now() + hangAfterMs
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`Still waiting after ${hangAfterMs} ms for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}
