/**
 * The chain tip the pool believes: a height that several nodes agree on, never one node's word.
 *
 * Each node says how high its chain is (getnodeinfo's `lastblock.height`). A node that lies about
 * it, claiming blocks nobody else has, must not thereby look like the only up-to-date node and
 * take every call; and a node that restarts lower, or goes away, must not leave behind a height
 * that makes every other node look behind. So the tip is computed anew from the present reports
 * (the nodes answering now, each by its latest report), as the highest height that at least two
 * of them reach: the second-highest report. One node alone is believed, there being no other
 * word to weigh it against.
 *
 * Where each node stands against the tip:
 * - `in-step`: within `maxLagBlocks` of it, either side (block propagation makes nodes differ by a
 *   block or two);
 * - `lagging`: further behind;
 * - `ahead`: further ahead, when the tip is corroborated (at least two present nodes in step with
 *   it): the node claims blocks the others do not have, which a liar does and an honest node does
 *   only for as long as the others take to catch up. Without such a majority, nothing tells the
 *   liar from the honest node, and none is called ahead (docs/resilience.md, "A node that lies").
 *
 * Pure code: the pool calls it whenever a report or a circuit changes.
 */

export type ChainStanding = 'in-step' | 'lagging' | 'ahead'

export interface AgreedTip {
  /** The agreed height, or undefined while no node reports one. */
  height: number | undefined
  /** Whether at least two present nodes are in step with `height`. */
  corroborated: boolean
}

export const NO_TIP: AgreedTip = { height: undefined, corroborated: false }

/** The tip that `heights` (one present report per node) agree on. */
export function agreedTip (heights: readonly number[], maxLagBlocks: number): AgreedTip {
  if (heights.length === 0) return NO_TIP
  let highest = -Infinity
  let second = -Infinity
  for (const height of heights) {
    if (height > highest) {
      second = highest
      highest = height
    } else if (height > second) {
      second = height
    }
  }
  const height = heights.length === 1 ? highest : second
  let inStep = 0
  for (const reported of heights) if (Math.abs(reported - height) <= maxLagBlocks) inStep++
  return { height, corroborated: inStep >= 2 }
}

/** Where a node reporting `height` stands against `tip`; a node that has not reported is in step until it does. */
export function standingOf (height: number | undefined, tip: AgreedTip, maxLagBlocks: number): ChainStanding {
  if (height === undefined || tip.height === undefined) return 'in-step'
  if (tip.height - height > maxLagBlocks) return 'lagging'
  if (tip.corroborated && height - tip.height > maxLagBlocks) return 'ahead'
  return 'in-step'
}
