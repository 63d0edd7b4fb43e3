/**
 * bastyon-miniapp-testkit as a mini-app developer installs it: `npm pack` of the package (its
 * prepack builds it, the emulator compiled in), installed offline into an empty project with no
 * clone around it, then used from plain JavaScript (a devnode that mines and pays, a signer, the
 * stand-in host), run as `bastyon-devnode` by plain node through its #! line, and compiled from
 * TypeScript under `tsc --strict` by TypeScript 5.9.
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import { installOffline, NODE_CONSUMER, pack, typecheckAsConsumer } from '../helpers/offline-install.js'

const run = promisify(execFile)
const ROOT = new URL('../../', import.meta.url).pathname
const PACKAGE_DIR = join(ROOT, 'packages/miniapp-testkit')
const NAME = 'bastyon-miniapp-testkit'

const USE_FROM_JAVASCRIPT = `
import Fastify from 'fastify'
import { mountDevHost, standInHost, startBastyonProxy, startDevnode, testSigner } from '${NAME}'
const devnode = await startDevnode()
const page = Fastify()
mountDevHost(page, { devnode, appId: 'my.app' })
const devSigned = (await page.inject({ method: 'POST', url: '/demo/signer/sign', payload: { text: 'challenge', signer: 'alice' } })).json().data
const devWallet = (await page.inject('/demo/wallet')).json().data
const rpc = async (method, params = []) => (await (await fetch(devnode.url + '/public/', { method: 'POST', body: JSON.stringify({ method, params }) })).json()).result
const start = (await rpc('getnodeinfo')).lastblock.height
devnode.mine(2)
const user = testSigner('a user')
const host = standInHost({ signer: user, devnode, appId: 'my.app' })
const signed = await host.sign('challenge')
const { transaction } = await host.payment({ recievers: [{ address: devnode.dataset.users[0].address, amount: 1.5 }], feemode: 'exclude', message: 'order 1' })
devnode.mine()
const mined = await rpc('getrawtransaction', [transaction])
await devnode.close()
const proxy = await startBastyonProxy({ apps: { 'my.app': { name: 'My app', scope: 'my.app' } } })
proxy.addToken('my.app', user.address)
const pushed = await (await fetch(proxy.url + '/miniapp/sendNotification', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ address: user.address, appId: 'my.app', url: '/a', header: 'Hi' }) })).json()
await proxy.close()
console.log(JSON.stringify({ push: [pushed.result, proxy.pushes(user.address)[0].body], devHost: devSigned.signature.address === devSigned.address && devWallet.address === devnode.wallet, closed: (await rpc('getnodeinfo').catch(() => null)) === null, raised: devnode.height - start, nonce: signed.nonce.split(',s=')[1], payer: mined.vin[0].address === user.address, value: mined.vout[0].value, confirmations: devnode.transaction(transaction).confirmations }))
`

const USE_FROM_TYPESCRIPT = `
import Fastify from 'fastify'
import { mountDevHost, standInHost, startBastyonProxy, startDevnode, testSigner, type BastyonProxy, type Devnode, type HostSignature, type Host, type MinedBlock, type RecordedPush } from '${NAME}'

export async function payAndConfirm (appId: string): Promise<number> {
  const devnode: Devnode = await startDevnode({ port: 0, controls: false })
  const signer = testSigner('alice', { network: 'main' })
  const signature: HostSignature = signer.sign('challenge', appId)
  const host: Host = standInHost({ signer, devnode, appId })
  const { txid } = devnode.pay({ to: devnode.dataset.users[0]?.address ?? signature.address, amountSat: 150_000_000, memo: 'hello' })
  const blocks: MinedBlock[] = devnode.mine(2)
  mountDevHost(Fastify(), { devnode, appId })
  await host.payment?.({ recievers: [{ address: signer.address, amount: 1 }], feemode: 'exclude', message: 'hi' })
  // @ts-expect-error amountSat is whole satoshi, a number
  devnode.pay({ to: signer.address, amountSat: '1' })
  // @ts-expect-error the stand-in host needs the app id it signs for
  standInHost({ signer, devnode })
  await devnode.close()
  const proxy: BastyonProxy = await startBastyonProxy({ apps: { [appId]: { name: 'App', scope: appId } } })
  proxy.fault('http-500', 1)
  // @ts-expect-error the faults are named
  proxy.fault('down')
  const pushes: RecordedPush[] = proxy.pushes(signer.address)
  await proxy.close()
  return (devnode.transaction(txid)?.confirmations ?? 0) + blocks.length + pushes.length
}
`

const USE_TELEGRAM_FROM_JAVASCRIPT = `
import { createServer } from 'node:http'
import { EMULATOR_BOT_TOKEN, startTelegramBotApi } from '${NAME}'
const received = []
const webhook = createServer((request, response) => {
  let body = ''
  request.on('data', chunk => { body += chunk })
  request.on('end', () => { received.push({ secret: request.headers['x-telegram-bot-api-secret-token'], text: JSON.parse(body).message.text }); response.end('{}') })
}).listen(0, '127.0.0.1')
await new Promise(resolve => webhook.once('listening', resolve))
const telegram = await startTelegramBotApi({ username: 'my_app_bot', webhookRetryDelayMs: 0 })
const call = async (method, params) => (await (await fetch(telegram.url + '/bot' + telegram.token + '/' + method, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(params) })).json())
await call('setWebhook', { url: 'http://127.0.0.1:' + webhook.address().port + '/hook', secret_token: 's3cret' })
const delivery = await telegram.userWrites({ chatId: 555, text: '/start abc' })
const sent = await call('sendMessage', { chat_id: 555, text: 'hello', reply_markup: { inline_keyboard: [[{ text: 'Open', url: 'https://example.com' }]] } })
telegram.fault('too-many-requests', 1, { retryAfterS: 2 })
const limited = await call('sendMessage', { chat_id: 555, text: 'again' })
await telegram.close()
webhook.close()
console.log(JSON.stringify({ token: telegram.token === EMULATOR_BOT_TOKEN, delivered: delivery.delivered, received, sent: sent.ok && telegram.sentMessages(555).map(({ message }) => message.text), limited: [limited.error_code, limited.parameters] }))
`

const USE_TELEGRAM_FROM_TYPESCRIPT = `
import { startTelegramBotApi, type TelegramBotApi, type WebhookDelivery } from '${NAME}'

export async function linkAndSend (): Promise<number> {
  const telegram: TelegramBotApi = await startTelegramBotApi({ port: 0, webhookAttempts: 2 })
  const delivery: WebhookDelivery = await telegram.userWrites({ chatId: 1, text: '/start x' })
  // @ts-expect-error faults are named ones
  telegram.fault('slow')
  await telegram.close()
  return delivery.update.update_id + telegram.sentMessages(1).length
}
`

/** Each DEVNODE_ variable devnode/cli.ts reads. */
function cliVariables (): string[] {
  const source = readFileSync(join(ROOT, 'devnode/cli.ts'), 'utf8')
  return [...new Set([...source.matchAll(/process\.env\.(DEVNODE_[A-Z_]+)/g)].map(match => match[1] as string))].sort()
}

/** Relative imports in the installed package that name no file of the package. */
function importsOutside (installed: string, files: string[]): string[] {
  const escaping: string[] = []
  for (const file of files.filter(path => path.endsWith('.js') || path.endsWith('.d.ts'))) {
    for (const [, specifier] of readFileSync(join(installed, file), 'utf8').matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = relative(installed, resolve(dirname(join(installed, file)), specifier as string))
      const named = file.endsWith('.d.ts') ? target.replace(/\.js$/, '.d.ts') : target
      if (!files.includes(named)) escaping.push(`${file}: ${specifier as string}`)
    }
  }
  return escaping
}

describe('the bastyon-miniapp-testkit package', () => {
  it('packs its build with the emulator in it, installs offline, and works from JavaScript, as a bin, and from typed TypeScript', async (t) => {
    const work = mkdtempSync(join(tmpdir(), 'miniapp-testkit-'))
    t.after(() => rmSync(work, { recursive: true, force: true }))
    const packed = await pack(PACKAGE_DIR, work)
    const files = packed.files.sort()
    for (const entry of ['dist/index.js', 'dist/index.d.ts', 'dist/bin/devnode.js', 'dist/emulator/server.js', 'dist/emulator/cli.js', 'dist/emulator/data/generate.js']) {
      assert.ok(files.includes(entry), `${entry} in ${files.join(', ')}`)
    }
    assert.deepEqual(files.filter(path => !path.startsWith('dist/') && path !== 'package.json' && path !== 'README.md'), [], 'nothing but the build, the manifest and the README')
    assert.deepEqual(files.filter(path => path.endsWith('.ts') && !path.endsWith('.d.ts')), [], 'no TypeScript sources')
    assert.deepEqual(files.filter(path => /\.staging/.test(path)), [], 'not the build\'s staging')
    assert.doesNotMatch(readFileSync(join(PACKAGE_DIR, 'README.md'), 'utf8'), /\]\(\.\.\//, 'no link into the repository')

    const project = join(work, 'project')
    // Fastify beside it, as a mini-app has it: mountDevHost adds routes to the app's Fastify.
    await installOffline(work, project, [packed], { alsoFromRegistry: ['fastify'] })
    const installed = join(project, 'node_modules', NAME)
    assert.deepEqual(importsOutside(installed, files), [], 'every relative import names a file of the package')

    writeFileSync(join(project, 'app.js'), USE_FROM_JAVASCRIPT)
    const used = JSON.parse((await run(process.execPath, ['app.js'], { cwd: project })).stdout) as Record<string, unknown>
    assert.deepEqual(used, { push: ['success', 'My app: Hi'], devHost: true, closed: true, raised: 3, nonce: Buffer.from('challenge/my.app').toString('hex'), payer: true, value: 1.5, confirmations: 1 })

    // The Telegram Bot API emulator: the webhook gets the user's /start with the secret header; the bot sends, then meets flood control.
    writeFileSync(join(project, 'telegram.js'), USE_TELEGRAM_FROM_JAVASCRIPT)
    const telegram = JSON.parse((await run(process.execPath, ['telegram.js'], { cwd: project })).stdout) as Record<string, unknown>
    assert.deepEqual(telegram, { token: true, delivered: true, received: [{ secret: 's3cret', text: '/start abc' }], sent: ['hello'], limited: [429, { retry_after: 2 }] })

    // The bin, through npm's link and its #! line: plain node, no tsx.
    const path = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`
    const help = await run(join(project, 'node_modules/.bin/bastyon-devnode'), ['--help'], { env: { ...process.env, PATH: path } })
    for (const variable of cliVariables()) assert.match(help.stdout, new RegExp(`\\b${variable}\\b`), `--help names ${variable}`)
    const bin = spawn(join(project, 'node_modules/.bin/bastyon-devnode'), [], {
      cwd: project,
      env: { ...process.env, PATH: path, DEVNODE_PORT: '0', DEVNODE_WS_PORT: '0', DEVNODE_BLOCK_INTERVAL_MS: '3600000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    t.after(() => { if (bin.exitCode === null) bin.kill('SIGKILL') })
    let printed = ''
    bin.stdout.setEncoding('utf8')
    for await (const chunk of bin.stdout) {
      printed += chunk as string
      if (/Try: curl/.test(printed)) break
    }
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+) \(height (\d+)\), WebSocket on ws:\/\/127\.0\.0\.1:(\d+)\/ws/.exec(printed)
    assert.ok(url, printed)
    const info = await (await fetch(`${url[1] as string}/public/`, { method: 'POST', body: JSON.stringify({ method: 'getnodeinfo', params: [] }) })).json() as { result: { lastblock: { height: number }, ports: { wss: number } } }
    assert.equal(info.result.lastblock.height, Number(url[2]))
    assert.equal(info.result.ports.wss, Number(url[3]))
    assert.match(printed, /\/devnode\/pay/, 'the controls are on, as with npm run devnode')
    const exited = once(bin, 'exit')
    bin.kill('SIGTERM')
    assert.deepEqual(await exited, [0, null], 'closes and exits on SIGTERM')

    // Library checks included: the declarations compile on their own.
    const typecheck = await typecheckAsConsumer(project, USE_FROM_TYPESCRIPT + USE_TELEGRAM_FROM_TYPESCRIPT, NODE_CONSUMER)
    assert.equal(typecheck, '', 'the typed use compiles, and each @ts-expect-error line is an error')
  })
})
