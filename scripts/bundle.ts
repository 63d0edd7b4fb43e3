/**
 * The last step of `npm run build`: the service as tsc built it (dist/src/server.js) and the
 * dependencies it imports, in one file, dist/server.js, which `npm start` and the Dockerfile run.
 *
 * Why one file: Node.js 20 finds, reads and compiles each ES module on its own, and the service
 * imports about 1400 (TypeBox alone 700). Loading them was most of what a process spends to
 * start, which every cluster worker, restart and scale-out pays (bench/results.md, "Start of a
 * process"). esbuild is the transform tsx already runs the tests with.
 *
 * The guard: a module bundled into dist/ no longer sits next to its own files, so a package
 * that finds files relative to itself at run time would find nothing, or the wrong file. The
 * build fails if any bundled module names `__dirname`, `__filename`, `import.meta` or
 * `require.resolve`, unless it is below with the reason it is safe; such a package goes in
 * EXTERNAL, where Node loads it from node_modules as before. Any esbuild warning fails it too.
 */
import { readFileSync, rmSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
export const BUNDLE = 'dist/server.js'

/** Loaded from node_modules at run time, each for files of its own it reads or starts. */
const EXTERNAL = [
  // WebAssembly and the database's files, next to the module.
  '@electric-sql/pglite',
  // pg-native, an optional package pg requires if present.
  'pg',
  // The files they serve: swagger-ui's page, static's own send and mime tables.
  '@fastify/static',
  '@fastify/swagger-ui',
  // Log transports (pino-pretty in development) run in a worker thread started from pino's own files.
  'pino',
]

/** Bundled modules that name their location, and why each is right from dist/. */
const LOCATION_SAFE: Record<string, string> = {
  'src/paths.ts': 'walks up from its own directory to package.json, which dist/ has above it too',
  'src/http/server-options.ts': 'resolves pino-pretty with createRequire, which searches node_modules above dist/ as well',
  'node_modules/ioredis/built/Command.js': '__dirname only with the showFriendlyErrorStack option, which pocketnet-client never sets',
  'node_modules/@fastify/swagger/lib/util/read-package-json.js': 'a default title and version for the document, in a try that gives {} on failure; the service sets both',
}

const NAMES_LOCATION = /\b__dirname\b|\b__filename\b|\bimport\.meta\b|\brequire\.resolve\b/

/**
 * Bundles `root`'s dist/src/server.js into dist/server.js; throws on a warning or an unsafe
 * module, and on an entry of `locationSafe` that no bundled module needs any more.
 */
export async function bundleService (root = ROOT, locationSafe = LOCATION_SAFE): Promise<void> {
  const outfile = join(root, BUNDLE)
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['dist/src/server.js'],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    // The CommonJS packages inside call require() for Node's own modules, which an ES module lacks.
    // esbuild does not see the banner: its import takes a name no bundled module declares.
    banner: { js: "import { createRequire as createRequireOfTheBundle } from 'node:module'; const require = createRequireOfTheBundle(import.meta.url);" },
    // Through tsc's maps to src/: a stack trace read with --enable-source-maps names the TypeScript line.
    sourcemap: 'linked',
    sourcesContent: false,
    metafile: true,
    logLevel: 'silent',
  })
  const problems = result.warnings.map(warning => `esbuild: ${warning.text} (${warning.location?.file ?? '?'})`)
  const safe = new Set<string>()
  for (const input of Object.keys(result.metafile.inputs)) {
    const file = relative(root, join(root, input))
    if (!NAMES_LOCATION.test(readFileSync(join(root, file), 'utf8'))) continue
    // tsc's output is named by its source.
    const source = file.startsWith('dist/src/') ? file.replace(/^dist\//, '').replace(/\.js$/, '.ts') : file
    if (source in locationSafe) safe.add(source)
    else problems.push(`${source} names its own location: add its package to EXTERNAL in scripts/bundle.ts, or to LOCATION_SAFE with the reason it is right from dist/`)
  }
  for (const listed of Object.keys(locationSafe)) {
    if (!safe.has(listed)) problems.push(`${listed} is in LOCATION_SAFE but no longer bundled or no longer names its location: remove it`)
  }
  if (problems.length > 0) {
    rmSync(outfile, { force: true })
    throw new Error(`The bundle is not safe to run:\n${problems.map(problem => `- ${problem}`).join('\n')}`)
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await bundleService()
