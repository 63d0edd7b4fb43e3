/**
 * The rules of a notification and of the proxies a user may name (src/notifications/notification-rules.ts),
 * pure: each refusal's code, the limits at their edges, and origins as the allowlist compares them.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { addressOf, testKey } from '../../devnode/bastyon-host.js'
import { NotificationError } from '../../src/notifications/notification-errors.js'
import { checkNotification, parseProxyList, proxyOrigin, type NotificationInput } from '../../src/notifications/notification-rules.js'

const ADDRESS = addressOf(testKey('a recipient'))
const VALID: NotificationInput = { to: ADDRESS, header: 'Hello', path: '/', id: 'a' }

function codeOf (input: unknown): string | undefined {
  try {
    checkNotification(input as NotificationInput, 'main')
    return undefined
  } catch (err) {
    assert.ok(err instanceof NotificationError, String(err))
    assert.equal(err.statusCode, 400)
    return err.code
  }
}

describe('a notification\'s rules', () => {
  it('takes one address or a list, and gives back a list', () => {
    assert.deepEqual(checkNotification(VALID, 'main').to, [ADDRESS])
    assert.deepEqual(checkNotification({ ...VALID, to: Array(1000).fill(ADDRESS) }, 'main').to.length, 1000)
  })

  it('refuses each broken rule with its code', () => {
    const cases: Array<[unknown, string]> = [
      [null, 'NOTIFY_ERR_RECIPIENTS'],
      [{ ...VALID, to: [] }, 'NOTIFY_ERR_RECIPIENTS'],
      [{ ...VALID, to: Array(1001).fill(ADDRESS) }, 'NOTIFY_ERR_RECIPIENTS'],
      [{ ...VALID, to: [ADDRESS, 42] }, 'NOTIFY_ERR_RECIPIENTS'],
      [{ ...VALID, to: addressOf(testKey('a recipient'), 0x41) }, 'NOTIFY_ERR_RECIPIENTS'],
      [{ ...VALID, header: 'x'.repeat(101) }, 'NOTIFY_ERR_HEADER'],
      [{ ...VALID, header: 'tab\there' }, 'NOTIFY_ERR_HEADER'],
      [{ ...VALID, header: 'line\u2028separator' }, 'NOTIFY_ERR_HEADER'],
      [{ ...VALID, header: 7 }, 'NOTIFY_ERR_HEADER'],
      [{ ...VALID, path: '' }, 'NOTIFY_ERR_PATH'],
      [{ ...VALID, path: 'https://evil.example' }, 'NOTIFY_ERR_PATH'],
      [{ ...VALID, path: '//evil.example' }, 'NOTIFY_ERR_PATH'],
      [{ ...VALID, path: '/a\\b' }, 'NOTIFY_ERR_PATH'],
      [{ ...VALID, path: '/café' }, 'NOTIFY_ERR_PATH'],
      [{ ...VALID, path: `/${'a'.repeat(200)}` }, 'NOTIFY_ERR_PATH'],
      [{ ...VALID, id: 'ünï' }, 'NOTIFY_ERR_ID'],
      [{ ...VALID, id: 'a/b' }, 'NOTIFY_ERR_ID'],
    ]
    for (const [input, code] of cases) assert.equal(codeOf(input), code, JSON.stringify(input)?.slice(0, 80))
    for (const input of [{ ...VALID, header: 'x'.repeat(100) }, { ...VALID, header: '✓'.repeat(100) }, { ...VALID, path: `/${'a'.repeat(199)}` }, { ...VALID, path: '/orders/42?tab=items#top' }, { ...VALID, id: `order:42.shipped_${'x'.repeat(100)}`.slice(0, 128) }]) {
      assert.equal(codeOf(input), undefined, JSON.stringify(input).slice(0, 80))
    }
  })
})

describe('the proxies\' origins', () => {
  it('reads an origin as the allowlist compares it, https anywhere and http on loopback only', () => {
    assert.equal(proxyOrigin('https://1.pocketnet.app:8899'), 'https://1.pocketnet.app:8899')
    assert.equal(proxyOrigin('https://1.Pocketnet.APP:8899/'), 'https://1.pocketnet.app:8899')
    assert.equal(proxyOrigin('https://proxy.example:443'), 'https://proxy.example')
    assert.equal(proxyOrigin('http://127.0.0.1:38089'), 'http://127.0.0.1:38089')
    assert.equal(proxyOrigin('http://[::1]:38089'), 'http://[::1]:38089')
    assert.equal(proxyOrigin('http://localhost:38089'), 'http://localhost:38089')
    for (const refused of ['http://proxy.example', 'http://192.168.1.2:8899', 'https://proxy.example/miniapp', 'https://proxy.example?x=1', 'https://proxy.example#x', 'https://u:p@proxy.example', 'https://proxy.example\\@evil', 'file:///etc/passwd', 'proxy.example', '']) {
      assert.equal(proxyOrigin(refused), undefined, refused)
    }
    assert.deepEqual(parseProxyList(' https://a.example:8899 ,, http://127.0.0.1:1 '), { origins: ['https://a.example:8899', 'http://127.0.0.1:1'] })
    assert.deepEqual(parseProxyList('https://a.example,http://b.example'), { origins: ['https://a.example'], bad: 'http://b.example' })
  })
})
