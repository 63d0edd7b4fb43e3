/** A Zipf distribution over ranks, for the benchmark's keyword mix. */

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
