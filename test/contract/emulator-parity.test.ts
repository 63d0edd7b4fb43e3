/**
 * The emulator (devnode/) answers like the real node: for every method both serve, the same kind
 * of question, asked of each with its own data, gets answers of the same structure (the same
 * field names, JSON types and nulls: json-shape.ts), and the same bad params get the same error
 * code and HTTP status. `npm test` runs against the emulator; this is what makes that truthful.
 * Where they differ, the emulator is fixed, not this test.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHash } from 'node:crypto'
import { addressOf, testKey } from '../../devnode/bastyon-host.js'
import { createEmulator, type Emulator } from '../../devnode/server.js'
import { IMPLEMENTED_METHODS, PUBLIC_METHODS } from '../../devnode/methods/index.js'
import { PocketNetProxyApi, RPC_TABLE, RpcClientError, RpcNodeError, type PocketnetNetwork } from '../../packages/pocketnet-client/index.js'
import { contractNode, type Dataset } from './contract-node.js'
import { differences, numericKeysAsData, shapeOf } from './json-shape.js'
import { paramsFor, type ChainFacts } from './method-params.js'

interface Answer { status: number, result: unknown, error: { code: number } | null }

async function ask (url: string, method: string, params: unknown[]): Promise<Answer> {
  const response = await fetch(`${url}/public/`, { method: 'POST', body: JSON.stringify({ method, params }), headers: { 'content-type': 'application/json' } })
  const body = await response.json() as { result: unknown, error: { code: number } | null }
  return { status: response.status, result: body.result, error: body.error }
}

/** One kind of question: params for the node (from the real chain's dataset) and for the emulator (from its own). */
/**
 * Fields the node gives only for data the regtest chain has none of: a comment's `reputation` once
 * it is rated, and `amount`/`donation` for a comment that paid the author. The emulator's data has
 * both; the node's source gives them in the same form.
 */
const ONLY_WITH_RATINGS_OR_DONATIONS = (path: string): boolean => /\.(reputation|amount|donation)$/.test(path) && /comment|lastComment|^\[\]/i.test(path)

interface Question {
  method: string
  node: unknown[]
  emulator: unknown[]
  /** Paths whose structure depends on data only one side has (say why). */
  ignore?: (path: string) => boolean
}

describe('the emulator answers like the real node', () => {
  let emulator: Emulator
  const questions: Question[] = []

  before(async () => {
    emulator = await createEmulator({ port: 0 })
    const { dataset } = contractNode
    const [alice, bob] = dataset.accounts as [typeof dataset.accounts[number], typeof dataset.accounts[number]]
    const own = emulator.dataset
    // A payment as the dataset's: to a receiver, a memo, and the change back to the payer.
    const payment = dataset.payments[0] as { txid: string }
    const [payer, receiver] = own.users.map(each => each.address) as [string, string]
    const paid = emulator.addTransaction({
      inputs: [{ address: payer, amount: 50 * 100_000_000 }],
      outputs: [{ address: receiver, amount: 150_000_000 }, { memo: Buffer.from('inv_demo_exact').toString('hex'), amount: 0 }, { address: payer, amount: 4_849_900_000 }],
    })
    emulator.mineBlock()
    const user = own.users.find(each => each.subscribers.length > 0 && each.subscribes.length > 0) ?? own.users[0]
    const post = own.posts.find(each => own.comments.some(comment => comment.postid === each.hash)) ?? own.posts[0]
    assert.ok(user !== undefined && post !== undefined)
    questions.push(
      { method: 'getnodeinfo', node: [], emulator: [] },
      { method: 'getuserprofile', node: [[alice.address, bob.address], '1'], emulator: [[user.address, own.users[1]?.address], '1'] },
      // `content` counts contents by type code: its keys are data.
      { method: 'getuserprofile', node: [[alice.address]], emulator: [[user.address]], ignore: path => path.startsWith('[].content.') },
      { method: 'search', node: ['bitcoin', 'posts', 0, 0, 10], emulator: [own.posts[0]?.caption.split(' ')[0], 'posts', 0, 0, 10], ignore: ONLY_WITH_RATINGS_OR_DONATIONS },
      { method: 'search', node: ['alice', 'users', 0, 0, 10], emulator: [user.name, 'users', 0, 0, 10] },
      { method: 'getcontent', node: [[...alice.posts, ...bob.posts]], emulator: [own.posts.slice(0, 4).map(each => each.hash)], ignore: ONLY_WITH_RATINGS_OR_DONATIONS },
      { method: 'getcomments', node: [alice.posts[0]], emulator: [post.hash], ignore: ONLY_WITH_RATINGS_OR_DONATIONS },
      { method: 'getuserstate', node: [alice.address], emulator: [user.address] },
      { method: 'gettags', node: ['0', '10', null, 'en'], emulator: ['0', '10', null, 'en'] },
      { method: 'getusersubscribers', node: [alice.address], emulator: [user.address] },
      { method: 'getusersubscribes', node: [alice.address], emulator: [user.address] },
      { method: 'getapps', node: [{}], emulator: [{}] },
      // What the node event source reads (packages/pocketnet-client/events/).
      { method: 'getlastblocks', node: [5], emulator: [5] },
      { method: 'getlastblocks', node: [3, dataset.height - 10, true], emulator: [3, emulator.height - 1, true], ignore: path => path.startsWith('[].types.') },
      { method: 'getcompactblock', node: [null, dataset.height - 5], emulator: [null, emulator.height - 1] },
      { method: 'getnotifications', node: [dataset.height - 50], emulator: [emulator.height], ignore: path => /^\.notifiers\./.test(path) || path.startsWith('.data[].') },
      // What proves a payment: a payment with a memo, in a block.
      { method: 'getrawtransaction', node: [payment.txid], emulator: [paid.txid] },
      { method: 'gettransactions', node: [[payment.txid]], emulator: [[paid.txid]] },
      // The feeds: contents as getcontent gives them, in {height, contents}.
      ...['gethierarchicalfeed', 'gethierarchicalstrip', 'gethistoricalfeed', 'gethistoricalstrip', 'getmostcommentedfeed', 'gettopfeed'].map(method => ({ method, node: [0, '', 3], emulator: [0, '', 3], ignore: ONLY_WITH_RATINGS_OR_DONATIONS })),
      { method: 'getprofilefeed', node: [0, '', 3, '', [], [], [], [], [], '', alice.address], emulator: [0, '', 3, '', [], [], [], [], [], '', post.address], ignore: ONLY_WITH_RATINGS_OR_DONATIONS },
      { method: 'getsubscribesfeed', node: [0, '', 3, '', [], [], [], [], [], '', alice.address], emulator: [0, '', 3, '', [], [], [], [], [], '', user.address], ignore: ONLY_WITH_RATINGS_OR_DONATIONS },
      // A post drawn at random: whether it has a last comment or a URL is the draw's.
      { method: 'getrandomcontents', node: [], emulator: [], ignore: path => path.startsWith('[].lastComment') || path === '[].u' || ONLY_WITH_RATINGS_OR_DONATIONS(path) }
    )
  })
  after(() => emulator.close())

  it('answers each method it implements with the structure the node gives', async () => {
    const found: string[] = []
    for (const question of questions) {
      const [node, own] = await Promise.all([ask(contractNode.url, question.method, question.node), ask(emulator.url, question.method, question.emulator)])
      assert.equal(node.error, null, `${question.method} ${JSON.stringify(question.node)} on the node: ${JSON.stringify(node.error)}`)
      assert.equal(own.error, null, `${question.method} ${JSON.stringify(question.emulator)} on the emulator: ${JSON.stringify(own.error)}`)
      for (const difference of differences(shapeOf(node.result), shapeOf(own.result), question.ignore)) found.push(`${question.method}${difference}`)
    }
    assert.deepEqual(found, [])
  })

  it('answers every other public method with the JSON type the node gives', async () => {
    const found: string[] = []
    for (const [method, { status, result }] of Object.entries(PUBLIC_METHODS)) {
      if (status !== 'ok' && status !== 'stub') continue
      // Asked with no params: an answer of the table's type, or the node's error for a missing param.
      const [node, own] = await Promise.all([ask(contractNode.url, method, []), ask(emulator.url, method, [])])
      const nodeType = node.error === null ? (Array.isArray(node.result) ? 'array' : typeof node.result) : `error ${node.error.code}`
      const ownType = own.error === null ? (Array.isArray(own.result) ? 'array' : typeof own.result) : `error ${own.error.code}`
      if (node.error === null && nodeType !== result) found.push(`${method}: the node answers a ${nodeType}, the table says ${result}`)
      if (nodeType !== ownType || node.status !== own.status) found.push(`${method} []: the node ${nodeType} (HTTP ${node.status}), the emulator ${ownType} (HTTP ${own.status})`)
    }
    assert.deepEqual(found, [])
  })

  it('answers each method it has no data for as the node answers a question about nothing it knows', async () => {
    // Valid params (method-params.ts) that name no one and nothing: addresses of keys no account
    // uses, hashes of no transaction, the chain's first blocks. The node has data for these methods
    // and the emulator has none, so the question is asked where neither has any.
    const unknown = (what: string): string => createHash('sha256').update(`contract: no such ${what}`).digest('hex')
    const nothing = (network: PocketnetNetwork, height: number): ChainFacts => {
      const version = network === 'regtest' ? 111 : 0x37
      const account = (name: string): Dataset['accounts'][number] => ({ name, address: addressOf(testKey(`contract: nobody ${name}`), version), privkey: '', posts: [unknown(`${name}'s post`)], comments: [unknown(`${name}'s comment`)] })
      const dataset: Dataset = { height, miner: '', accounts: [account('nobodyone'), account('nobodytwo')], payments: [{ txid: unknown('payment'), memo: '', amount: '0' }] }
      return { dataset, commentBlock: { height: 2, hash: unknown('block') }, tipHash: unknown('tip') }
    }
    const outcome = async (api: PocketNetProxyApi, method: string, params: unknown): Promise<{ result?: unknown, error?: string }> => {
      try {
        return { result: await (api.rpc as unknown as Record<string, (params: unknown) => Promise<unknown>>)[method]?.(params) }
      } catch (err) {
        if (err instanceof RpcNodeError) return { error: `RPC error ${err.rpcCode}` }
        if (err instanceof RpcClientError) return { error: err.code }
        throw err
      }
    }
    const node = await PocketNetProxyApi.create({ nodes: [contractNode.url], network: 'regtest', hedging: false, cache: { ttlMs: {} } })
    const own = await PocketNetProxyApi.create({ nodes: [emulator.url], network: 'main', hedging: false, cache: { ttlMs: {} } })
    const found: string[] = []
    let asked = 0
    try {
      const nodeFacts = nothing('regtest', contractNode.dataset.height)
      const ownFacts = nothing('main', emulator.height)
      for (const [method, { status }] of Object.entries(PUBLIC_METHODS)) {
        const typed = (RPC_TABLE as Record<string, { status: string, params: ReadonlyArray<{ name: string, required: boolean }> }>)[method]
        if (status !== 'ok' || IMPLEMENTED_METHODS.has(method) || typed === undefined || typed.status !== 'ok') continue
        const required = typed.params.filter(param => param.required).map(param => param.name)
        const [theirs, ours] = await Promise.all([outcome(node, method, paramsFor(method, required, nodeFacts)), outcome(own, method, paramsFor(method, required, ownFacts))])
        asked++
        if (theirs.error !== undefined || ours.error !== undefined) {
          if (theirs.error !== ours.error) found.push(`${method}: the node ${theirs.error ?? 'answers'}, the emulator ${ours.error ?? 'answers'}`)
          continue
        }
        // The statistics are keyed by hours, days and transaction types: data, not field names.
        const shape = (value: unknown): ReturnType<typeof shapeOf> => method.startsWith('getstatistic') ? numericKeysAsData(shapeOf(value)) : shapeOf(value)
        for (const difference of differences(shape(theirs.result), shape(ours.result))) found.push(`${method}${difference}`)
        const size = (value: unknown): string => JSON.stringify(value)?.length.toString() ?? 'nothing'
        if ((JSON.stringify(theirs.result)?.length ?? 0) > 2 && (JSON.stringify(ours.result)?.length ?? 0) <= 2) found.push(`${method}: the node answers ${size(theirs.result)} characters, the emulator ${JSON.stringify(ours.result)}: ${JSON.stringify(theirs.result)?.slice(0, 200)}`)
      }
    } finally {
      await Promise.all([node.close(), own.close()])
    }
    assert.ok(asked > 40, `asked ${asked} methods`)
    assert.deepEqual(found, [])
  })

  it('refuses the same bad params with the same error code and HTTP status', async () => {
    const address = contractNode.dataset.accounts[0]?.address as string
    const cases: Array<[string, unknown[]]> = [
      ['search', []], ['search', ['x']], ['search', [1, 'posts']], ['search', ['x', 1]], ['search', ['x', 'posts', 1.5]],
      ['getcontent', []], ['getcontent', [1]], ['getcontent', [[1]]],
      ['getcomments', []], ['getcomments', [1]], ['getcomments', ['']],
      ['getuserstate', []], ['getuserstate', [1]], ['getuserstate', ['bad']],
      ['gettags', [1]], ['gettags', ['0', '10', null, 'en']],
      ['getusersubscribers', []], ['getusersubscribers', [1]],
      ['getuserprofile', []], ['getuserprofile', [1]], ['getuserprofile', [[address], 1]], ['getuserprofile', [[address], null]],
      ['getapps', []], ['getapps', ['x']], ['getappscores', [{}]], ['getappcomments', [{}]],
      ['getbalancehistory', [[address]]], ['gettopaccounts', [1, 10, 'en', [], [200]]], ['getrecommendedaccountbyaddress', [address]],
      ['getprofilecollections', []],
      ['getrawtransaction', []], ['getrawtransaction', [1]], ['getrawtransaction', [null]], ['getrawtransaction', ['ab'.repeat(32)]],
      ['gettransactions', []], ['gettransactions', [1]], ['gettransactions', [[1]]], ['gettransactions', [['ab'.repeat(32)]]],
      ['gettopfeed', [0, '', 'ten']], ['getprofilefeed', [0, '', 10]], ['getprofilefeed', [0, '', 10, '', [], [], [], [], [], '', 'nobody']],
      ['getsubscribesfeed', [0, '', 10]], ['getsubsciptionsgroupedbyauthors', []],
      ['nosuchmethod', []],
    ]
    const found: string[] = []
    for (const [method, params] of cases) {
      const [node, own] = await Promise.all([ask(contractNode.url, method, params), ask(emulator.url, method, params)])
      const outcome = (answer: Answer): string => `${answer.error === null ? 'an answer' : `error ${answer.error.code}`} (HTTP ${answer.status})`
      if (outcome(node) !== outcome(own)) found.push(`${method} ${JSON.stringify(params)}: the node ${outcome(node)}, the emulator ${outcome(own)}`)
    }
    assert.deepEqual(found, [])
  })
})
