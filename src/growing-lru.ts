/**
 * An LRUCache of at most `maxEntries` entries whose storage grows as it fills.
 *
 * lru-cache's `max` allocates the storage for all `max` entries when the cache is made: at the
 * 100 000 clients or sessions the service tracks, milliseconds of CPU and megabytes of memory for
 * each of the several such caches an instance makes at start, for tables that mostly hold a
 * handful of entries (bench/results.md, "The suite, second round"). Counting each entry as size 1 against
 * `maxSize` is the same bound, evicting the least recently used entry the same way, without that.
 */
import { LRUCache } from 'lru-cache'

type GrowingOptions<K extends {}, V extends {}> = Omit<LRUCache.Options<K, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation' | 'maxEntrySize'>

const ONE = (): number => 1

export function growingLru<K extends {}, V extends {}> (maxEntries: number, options: GrowingOptions<K, V> = {}): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: maxEntries, sizeCalculation: ONE })
}
