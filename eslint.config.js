import neostandard from 'neostandard'
import globals from 'globals'

export default [
  ...neostandard({
    ts: true,
    // What npm test makes and removes while lint runs beside it: the build's lock, the test processes' entry files.
    ignores: ['dist/**', 'packages/*/dist/**', 'packages/create-bastyon-miniapp/template/**', 'coverage/**', 'test-artifacts/**', 'node_modules/**', '.build-lock/', 'test/.groups/'],
  }),
  // The demo page and the examples' pages run in the browser.
  { files: ['public/**/*.js', 'examples/*/public/**/*.js'], languageOptions: { globals: globals.browser } },
]
