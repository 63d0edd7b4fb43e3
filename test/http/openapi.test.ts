import assert from 'node:assert/strict'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import SwaggerParser from '@apidevtools/swagger-parser'
import { startApp } from '../helpers/build-app.js'
import { freshDataDir } from '../payments/databases.js'

// Docs never reach a node: an address nothing listens on.
const NO_NODE = 'http://127.0.0.1:9'

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document listing every route with its errors', async (t) => {
    const service = await startApp(t, { nodes: [NO_NODE] })
    const { status, body } = await service.get('/openapi.json')
    assert.equal(status, 200)
    assert.equal(body.openapi, '3.1.0')
    await SwaggerParser.validate(structuredClone(body))
    const api = ['/api/content/{hash}', '/api/content/{hash}/comments', '/api/events', '/api/events/poll', '/api/nodeinfo', '/api/post/{hash}', '/api/search', '/api/tags', '/api/user/{address}']
    assert.deepEqual(Object.keys(body.paths).sort(), [...api, '/healthz', '/readyz'])
    // The event stream's routes answer a stream or a long-poll, never a 404 or a node's 500.
    assert.deepEqual(Object.keys(body.paths['/api/events'].get.responses).sort(), ['200', '400', '401', '429', '503'])
    assert.deepEqual(Object.keys(body.paths['/api/events/poll'].get.responses).sort(), ['200', '400', '429', '503'])
    for (const path of api.filter(each => !each.startsWith('/api/events'))) {
      const responses = body.paths[path].get.responses
      assert.deepEqual(Object.keys(responses).sort(), ['200', '400', '404', '429', '500', '503'], path)
      const success = responses['200'].content['application/json']
      assert.ok(success.schema.properties.message && success.schema.properties.data, path)
      assert.ok(success.schema.examples?.[0]?.data ?? success.example, `${path} has example data`)
      assert.ok(responses['500'].content['application/json'].schema.properties.error, path)
    }
    const search = body.paths['/api/search'].get.parameters.map((parameter: { name: string, in: string, required?: boolean }) => [parameter.name, parameter.in, Boolean(parameter.required)])
    assert.deepEqual(search.sort(), [['keyword', 'query', true], ['page', 'query', false], ['pageSize', 'query', false]])
    const address = body.paths['/api/user/{address}'].get.parameters[0]
    assert.equal(address.in, 'path')
    assert.match(address.schema.description ?? address.description, /Pocketnet address/)
  })

  it('lists sign-in when BASTYON_APP_ID turns it on, with the bearer scheme on protected routes', async (t) => {
    const service = await startApp(t, { nodes: [NO_NODE], env: { BASTYON_APP_ID: 'demo.pocketnet.app' } })
    const { body } = await service.get('/openapi.json')
    await SwaggerParser.validate(structuredClone(body))
    assert.deepEqual(Object.keys(body.paths).filter((path: string) => /^\/api\/(auth|me|collections)\b/.test(path)).sort(), [
      '/api/auth/challenge', '/api/auth/session', '/api/collections/{name}', '/api/collections/{name}/{key}', '/api/me', '/api/me/entitlements', '/api/me/notifications', '/api/me/notifications/bastyon', '/api/me/storage', '/api/me/storage/{key}',
    ])
    assert.deepEqual(Object.keys(body.paths['/api/auth/session']).sort(), ['delete', 'post'])
    assert.deepEqual(body.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer', description: 'The token from POST /api/auth/session' })
    for (const [path, method] of [['/api/me', 'get'], ['/api/me/entitlements', 'get'], ['/api/auth/session', 'delete']] as const) {
      const operation = body.paths[path][method]
      assert.deepEqual(operation.security, [{ bearer: [] }], path)
      assert.ok(operation.responses['401'].content['application/json'].schema.properties.code.enum.includes('AUTH_TOKEN_INVALID'), path)
    }
    // Storage: the user's own routes and the collections' writes need sign-in; reading a collection does not.
    for (const [path, method] of [['/api/me', 'delete'], ['/api/me/storage', 'get'], ['/api/me/storage/{key}', 'get'], ['/api/me/storage/{key}', 'put'], ['/api/me/storage/{key}', 'delete'], ['/api/collections/{name}/{key}', 'put'], ['/api/collections/{name}/{key}', 'delete']] as const) {
      const operation = body.paths[path][method]
      assert.deepEqual(operation.security, [{ bearer: [] }], `${method} ${path}`)
      assert.ok(operation.responses['401'], `${method} ${path}`)
    }
    for (const path of ['/api/collections/{name}', '/api/collections/{name}/{key}']) assert.equal(body.paths[path].get.security, undefined, path)
    const put = body.paths['/api/me/storage/{key}'].put
    assert.deepEqual(put.requestBody.content['application/json'].schema.required, ['value'])
    assert.deepEqual(Object.keys(put.responses).sort(), ['200', '400', '401', '412', '413', '429', '500', '503'])
    assert.ok(put.responses['412'].content['application/json'].schema.properties.code.enum.includes('STORAGE_ERR_PRECONDITION_FAILED'))
    assert.deepEqual(Object.keys(body.paths['/api/collections/{name}/{key}'].put.responses).sort(), ['200', '400', '401', '403', '412', '413', '429', '500', '503'])
    const signIn = body.paths['/api/auth/session'].post
    assert.deepEqual(signIn.requestBody.content['application/json'].schema.required, ['signature'])
    assert.ok(signIn.responses['401'].content['application/json'].schema.properties.code.enum.includes('SIG_HIGH_S'))
    // Notifications: the user's channels behind the bearer scheme; the operators' send only with ADMIN_TOKEN.
    for (const [path, method] of [['/api/me/notifications', 'get'], ['/api/me/notifications/bastyon', 'put'], ['/api/me/notifications/bastyon', 'delete']] as const) {
      assert.deepEqual(body.paths[path][method].security, [{ bearer: [] }], `${method} ${path}`)
    }
    assert.ok(body.paths['/api/me/notifications/bastyon'].put.responses['400'].content['application/json'].schema.properties.code.enum.includes('NOTIFY_ERR_PROXY_NOT_ALLOWED'))
    assert.equal(body.paths['/api/admin/notifications'], undefined, 'no ADMIN_TOKEN, no admin route')
  })

  it('lists the operators\' send with ADMIN_TOKEN, behind its own bearer scheme', async (t) => {
    const service = await startApp(t, { nodes: [NO_NODE], env: { BASTYON_APP_ID: 'demo.pocketnet.app', ADMIN_TOKEN: 'an-admin-token-of-at-least-32-characters!' } })
    const { body } = await service.get('/openapi.json')
    await SwaggerParser.validate(structuredClone(body))
    const send = body.paths['/api/admin/notifications'].post
    assert.deepEqual(send.security, [{ adminToken: [] }])
    assert.equal(body.components.securitySchemes.adminToken.scheme, 'bearer')
    assert.deepEqual(send.responses['401'].content['application/json'].schema.properties.code.enum, ['ADMIN_TOKEN_MISSING', 'ADMIN_TOKEN_INVALID'])
    assert.deepEqual(send.responses['200'].content['application/json'].schema.properties.data.properties.results.items.properties.status.enum, ['sent', 'queued', 'failed', 'not_registered', 'duplicate', 'rate_limited'])
  })

  it('lists Telegram\'s link and unlink behind the bearer scheme and its webhook with its own 401s, with a bot', async (t) => {
    const env = { BASTYON_APP_ID: 'demo.pocketnet.app', TELEGRAM_BOT_TOKEN: '7000000001:AAE-emulatorTokenForTestsOnly_000000', TELEGRAM_BOT_USERNAME: 'demo_app_bot' }
    const service = await startApp(t, { nodes: [NO_NODE], env })
    const { body } = await service.get('/openapi.json')
    await SwaggerParser.validate(structuredClone(body))
    for (const method of ['post', 'delete']) assert.deepEqual(body.paths['/api/me/notifications/telegram'][method].security, [{ bearer: [] }], method)
    const webhook = body.paths['/api/telegram/webhook'].post
    assert.equal(webhook.security, undefined)
    assert.deepEqual(webhook.responses['401'].content['application/json'].schema.properties.code.enum, ['TELEGRAM_SECRET_MISSING', 'TELEGRAM_SECRET_INVALID'])
    const channels = body.paths['/api/me/notifications'].get.responses['200'].content['application/json'].schema.properties.data.properties.channels.items
    assert.deepEqual(channels.anyOf.map((each: { properties: { channel: { enum: string[] } } }) => each.properties.channel.enum), [['bastyon'], ['telegram']])
  })
})

describe('OpenAPI document of the catalogue', () => {
  it('lists the catalogue with CATALOG_FILE, buying an item behind the bearer scheme, answering the invoice with what it grants', async (t) => {
    const dataDir = await freshDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const catalogFile = join(dataDir, 'catalog.json')
    writeFileSync(catalogFile, JSON.stringify({ items: [{ sku: 'premium', title: 'Premium', priceSat: 100_000_000 }] }))
    const env = { BASTYON_APP_ID: 'demo.pocketnet.app', PAYMENT_ADDRESS: 'PEmxMUL35Z5rtULmHMuYLNYsQGu23HXBeX', CATALOG_FILE: catalogFile, DATA_DIR: dataDir }
    const service = await startApp(t, { nodes: [NO_NODE], env })
    const { body } = await service.get('/openapi.json')
    await SwaggerParser.validate(structuredClone(body))
    assert.deepEqual(Object.keys(body.paths).filter((path: string) => path.startsWith('/api/catalog')).sort(), ['/api/catalog', '/api/catalog/{sku}/invoice'])
    const buy = body.paths['/api/catalog/{sku}/invoice'].post
    assert.deepEqual(buy.security, [{ bearer: [] }])
    assert.deepEqual(Object.keys(buy.responses).sort(), ['200', '400', '401', '404', '429', '500', '503'])
    assert.deepEqual(Object.keys(buy.responses['200'].content['application/json'].schema.properties.data.properties.grant.properties).sort(), ['durationS', 'sku', 'to'])
    assert.equal(body.paths['/api/catalog'].get.security, undefined, 'anyone may read what is sold')
  })
})

describe('GET /docs', () => {
  it('answers the reference page with no external URL in it', async (t) => {
    const service = await startApp(t, { nodes: [NO_NODE] })
    const response = await fetch(`${service.url}/docs`)
    assert.equal(response.status, 200)
    const html = await response.text()
    assert.match(html, /swagger-ui/i)
    const references = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map(match => match[1] as string)
    assert.ok(references.length > 0)
    for (const reference of references) assert.doesNotMatch(reference, /^(https?:)?\/\//, reference)
    for (const reference of references) {
      const asset = await fetch(new URL(reference, `${service.url}/docs/`))
      assert.equal(asset.status, 200, reference)
      // Read to the end: an unread body holds its connection open, and the app's close waits for it.
      assert.ok((await asset.arrayBuffer()).byteLength > 0, reference)
    }
  })
})
