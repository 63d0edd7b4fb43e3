/** Folders of the project, found from this file whether it runs from src/ (tsx), dist/src/ or the bundle in dist/ (built). */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

function findProjectRoot (from: string): string {
  let dir = from
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`No package.json above ${from}`)
    dir = parent
  }
  return dir
}

export const PROJECT_ROOT = findProjectRoot(dirname(fileURLToPath(import.meta.url)))
/** The demo mini-app page, served at `/`. */
export const PUBLIC_DIR = join(PROJECT_ROOT, 'public')

/**
 * The browser client's build (bastyon-miniapp-client's dist/), which the demo page imports from
 * `/client/`; undefined when the package is not installed or not built (`npm run build`).
 */
export function browserClientDir (): string | undefined {
  try {
    const dir = join(dirname(createRequire(import.meta.url).resolve('bastyon-miniapp-client/package.json')), 'dist')
    return existsSync(join(dir, 'index.js')) ? dir : undefined
  } catch {
    return undefined
  }
}
