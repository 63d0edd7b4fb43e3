/**
 * V8 flags for the processes the tests start and end within seconds or kill (the built service,
 * the crash tests' writers, the full-disk writer): PGlite's WebAssembly compiled by Liftoff only.
 * By default V8 compiles each hot function again with TurboFan on worker threads, about 2 of the
 * 3 CPU-seconds a process spends opening the embedded database and writing a few hundred rows,
 * for code a process killed seconds later barely uses (bench/results.md, "Test suite").
 * Everywhere else (the in-process tests, `npm start`, the Dockerfile) V8 tiers up as usual.
 * Should a Node.js release drop the flag, `node` refuses to start and every test using it fails.
 */
export const SHORT_LIVED_NODE_FLAGS = ['--liftoff-only']
