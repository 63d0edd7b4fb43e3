import neostandard from 'neostandard'

export default neostandard({
  ts: true,
  ignores: ['dist/**', 'coverage/**', 'test-artifacts/**', 'node_modules/**'],
})
