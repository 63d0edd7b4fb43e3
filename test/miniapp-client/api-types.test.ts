/**
 * bastyon-miniapp-client's answer types are the service's response schemas, written as
 * TypeScript by `npm run generate:client-types`: a schema that changed without the client's types
 * following fails here, naming the command to run.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { CLIENT_TYPES_FILE, clientTypes } from '../../scripts/generate-client-types.js'

describe('the client\'s answer types', () => {
  it('are what the service\'s response schemas make now (else: npm run generate:client-types)', () => {
    const written = readFileSync(CLIENT_TYPES_FILE, 'utf8')
    assert.equal(written, clientTypes(), 'packages/miniapp-client/src/api-types.ts is out of date: npm run generate:client-types')
    // The invoice's states and the host's request, as the payments schema has them.
    assert.match(written, /state: 'pending' \| 'seen' \| 'confirmed' \| 'expired'/)
    assert.match(written, /export type CheckedTransaction = \{\n {2}invoice: Invoice\n/)
  })
})
