import neostandard from 'neostandard'
import globals from 'globals'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'lib/dist/**', 'coverage/**', 'test-artifacts/**', 'node_modules/**'],
  }),
  // The demo page runs in the browser.
  { files: ['public/**/*.js'], languageOptions: { globals: globals.browser } },
]
