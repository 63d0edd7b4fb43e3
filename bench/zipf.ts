/** Deterministic samples for the benchmark: a seeded PRNG and a Zipf distribution over ranks. */

/** mulberry32: small, fast, seeded; the same seed gives the same requests in every run. */
export function seededRandom (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6D2B79F5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Draws ranks 0..n-1 with probability proportional to 1 / (rank + 1)^s. */
export function zipfSampler (n: number, s: number, random: () => number): () => number {
  const cumulative = new Float64Array(n)
  let total = 0
  for (let rank = 0; rank < n; rank++) {
    total += 1 / (rank + 1) ** s
    cumulative[rank] = total
  }
  return () => {
    const target = random() * total
    let low = 0
    let high = n - 1
    while (low < high) {
      const mid = (low + high) >>> 1
      if ((cumulative[mid] as number) < target) low = mid + 1
      else high = mid
    }
    return low
  }
}
