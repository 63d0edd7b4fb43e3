// prepack: the template is the repository's examples/premium-article, copied in as it is packed,
// so that the scaffold writes what the repository tests (test/examples/).
import { cpSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const from = fileURLToPath(new URL('../../../examples/premium-article/', import.meta.url))
const to = fileURLToPath(new URL('../template/', import.meta.url))
rmSync(to, { recursive: true, force: true })
cpSync(from, to, { recursive: true, filter: source => !/[/\\](node_modules|data)([/\\]|$)/.test(source) })
