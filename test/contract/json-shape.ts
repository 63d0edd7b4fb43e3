/**
 * The structure of a JSON answer, without its values: for every path (`[].userprofile.name`), the
 * JSON types seen there and whether every object on the way had it. Two answers to the same kind
 * of question, from different data, have the same structure when the emulator answers like the
 * node.
 */

export type JsonType = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object'

export interface PathShape {
  types: Set<JsonType>
  /** Objects that could have held it, and how many did. */
  parents: number
  present: number
}

export type Shape = Map<string, PathShape>

const typeOf = (value: unknown): JsonType =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value as JsonType

/** The structure of `value`: every path below the root, with its types and presence. */
export function shapeOf (value: unknown): Shape {
  const shape: Shape = new Map()
  const note = (path: string, each: unknown): void => {
    let entry = shape.get(path)
    if (entry === undefined) shape.set(path, entry = { types: new Set(), parents: 0, present: 0 })
    entry.types.add(typeOf(each))
  }
  const walk = (path: string, each: unknown): void => {
    note(path, each)
    if (Array.isArray(each)) {
      for (const item of each) walk(`${path}[]`, item)
    } else if (each !== null && typeof each === 'object') {
      for (const [key, child] of Object.entries(each)) walk(`${path}.${key}`, child)
    }
  }
  walk('', value)
  // Presence: of the objects at a path's parent, how many had the key.
  for (const [path, entry] of shape) {
    const parent = shape.get(path.slice(0, path.lastIndexOf('.')))
    if (!path.endsWith('[]') && parent !== undefined) {
      entry.parents = countObjects(value, path.slice(0, path.lastIndexOf('.')))
      entry.present = countPresent(value, path)
    }
  }
  return shape
}

/** The values at `path`, walking every item of every list on the way. */
function valuesAt (value: unknown, path: string): unknown[] {
  let values = [value]
  for (const step of path.match(/\[\]|\.[^.[]+/g) ?? []) {
    values = values.flatMap(each => {
      if (step === '[]') return Array.isArray(each) ? each : []
      if (each === null || typeof each !== 'object' || Array.isArray(each)) return []
      const key = step.slice(1)
      return key in each ? [(each as Record<string, unknown>)[key]] : []
    })
  }
  return values
}

function countObjects (value: unknown, path: string): number {
  return valuesAt(value, path).filter(each => each !== null && typeof each === 'object' && !Array.isArray(each)).length
}

function countPresent (value: unknown, path: string): number {
  return valuesAt(value, path).length
}

/** Whether every object at the path's parent had the key. */
export const always = (entry: PathShape): boolean => entry.present === entry.parents

/**
 * How the emulator's structure differs from the node's: paths the node always gives and the
 * emulator never does, paths the emulator gives and the node never does, and paths both give
 * with types that share nothing (a null on one side is a difference too, unless the other side
 * has it as well).
 */
export function differences (node: Shape, emulator: Shape, ignore: (path: string) => boolean = () => false): string[] {
  const found: string[] = []
  for (const [path, entry] of node) {
    if (ignore(path)) continue
    const theirs = emulator.get(path)
    if (theirs === undefined) {
      // The emulator may simply have had no data there (an empty list): only a parent it did have counts.
      const parent = emulator.get(path.slice(0, Math.max(path.lastIndexOf('.'), path.lastIndexOf('[]'))))
      if (always(entry) && parent !== undefined && !path.endsWith('[]')) found.push(`${path}: the node always has it, the emulator never`)
      continue
    }
    const types = [...entry.types].sort().join('|')
    const emulatorTypes = [...theirs.types].sort().join('|')
    if (![...theirs.types].every(type => entry.types.has(type))) found.push(`${path}: the node gives ${types}, the emulator ${emulatorTypes}`)
  }
  for (const path of emulator.keys()) {
    if (ignore(path) || node.has(path)) continue
    const parent = node.get(path.slice(0, Math.max(path.lastIndexOf('.'), path.lastIndexOf('[]'))))
    if (parent !== undefined && !path.endsWith('[]')) found.push(`${path}: the emulator has it, the node never`)
  }
  return found
}

/**
 * The structure of an answer whose numeric keys are data (hours, days, transaction types), with
 * every such key written `#`: two answers keyed by different hours have the same structure.
 */
export function numericKeysAsData (shape: Shape): Shape {
  const merged: Shape = new Map()
  for (const [path, entry] of shape) {
    const general = path.replace(/\.\d+(?=\.|\[|$)/g, '.#')
    const into = merged.get(general)
    if (into === undefined) {
      merged.set(general, { types: new Set(entry.types), parents: entry.parents, present: entry.present })
    } else {
      for (const type of entry.types) into.types.add(type)
      into.parents = Math.max(into.parents, entry.parents)
      into.present = Math.max(into.present, entry.present)
    }
  }
  return merged
}
