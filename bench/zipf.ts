/** A Zipf distribution over ranks, for the benchmark's keyword mix. */
import { getDefaultDataset, seeded } from '../devnode/data/generate.js'

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

/**
 * Scenario b's requests, drawn once with a seeded PRNG, so every run sees the same sequence:
 * searches for the dataset's 500 most frequent words (Zipf(1.1): rank 0 the hottest), pages 0–2.
 */
export function zipfSearchPaths (draws: number): string[] {
  const frequency = new Map<string, number>()
  for (const post of getDefaultDataset().posts) for (const word of post.words) if (word.length >= 3) frequency.set(word, (frequency.get(word) ?? 0) + 1)
  const keywords = [...frequency].sort((a, b) => b[1] - a[1]).slice(0, 500).map(([word]) => encodeURIComponent(word))
  const random = seeded(42)
  const rank = zipfSampler(keywords.length, 1.1, random)
  return Array.from({ length: draws }, () => `/api/search?keyword=${keywords[rank()]}&page=${Math.floor(random() * 3)}&pageSize=20`)
}
