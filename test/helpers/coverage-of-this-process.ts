/**
 * Imported first by each of `npm test`'s test processes (scripts/test.ts): coverage is collected
 * in the test process itself, not in the processes its tests start (the built service, the demo,
 * npm, tsc), which would each write a coverage file of every module they load for lines the
 * in-process tests cover already (bench/results.md, "Test suite").
 */
delete process.env.NODE_V8_COVERAGE
