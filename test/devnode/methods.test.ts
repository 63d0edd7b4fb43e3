import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, it } from 'node:test'
import { generateDataset, getDefaultDataset, type CommentRecord, type Dataset, type UserRecord } from '../../devnode/data/generate.js'
import { IMPLEMENTED_METHODS, PUBLIC_METHODS } from '../../devnode/methods/index.js'
import { WITHOUT_PARAMS } from '../../devnode/methods/without-params.js'
import { startEmulator } from '../helpers/start-emulator.js'

/** One raw JSON-RPC POST, as a client of a real node would send it. */
async function rpc (url: string, method: string, params: unknown[] = [], path = '/public/'): Promise<{ status: number, body: any }> {
  const response = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ method, params, id: 3 }) })
  return { status: response.status, body: await response.json() }
}

/** The call fails as the node fails: HTTP status, code, and a message matching `message`. */
async function rejects (url: string, method: string, params: unknown[], status: number, code: number, message: RegExp): Promise<void> {
  const answer = await rpc(url, method, params)
  assert.equal(answer.status, status, `${method} ${JSON.stringify(params)}: ${JSON.stringify(answer.body)}`)
  assert.equal(answer.body.result, null)
  assert.equal(answer.body.error.code, code, `${method} ${JSON.stringify(params)}: ${answer.body.error.message}`)
  assert.match(answer.body.error.message, message)
}

const UNKNOWN_ADDRESS = 'P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88'

function postWithThreads (dataset: Dataset): { postid: string, top: CommentRecord[], replies: CommentRecord[], parent: CommentRecord } {
  for (const post of dataset.posts) {
    const all = dataset.comments.filter(comment => comment.postid === post.hash)
    const top = all.filter(comment => comment.parentid === '')
    const parent = top.find(comment => all.filter(reply => reply.parentid === comment.id).length >= 2)
    if (parent && top.length >= 3) return { postid: post.hash, top, replies: all.filter(reply => reply.parentid === parent.id), parent }
  }
  throw new Error('no post with threads')
}

const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : 1)

describe('the emulator\'s dataset', () => {
  it('keeps every user and post as they were before comments came', () => {
    const dataset = getDefaultDataset()
    const digest = createHash('sha256').update(JSON.stringify({ users: dataset.users, posts: dataset.posts, height: dataset.height })).digest('hex')
    assert.equal(digest, 'caefd8bd2d346f36aab823e952043fe60498305cfd92f76f8ed41fe8e65b981f')
  })

  it('gives each post exactly its comments count, replies in threads of the same post, by live users', () => {
    const dataset = generateDataset({ users: 60, posts: 300 })
    const byPost = new Map<string, CommentRecord[]>()
    for (const comment of dataset.comments) byPost.set(comment.postid, [...(byPost.get(comment.postid) ?? []), comment])
    const ids = new Map(dataset.comments.map(comment => [comment.id, comment]))
    assert.equal(ids.size, dataset.comments.length, 'ids are unique')
    for (const post of dataset.posts) {
      const comments = byPost.get(post.hash) ?? []
      assert.equal(comments.length, post.comments)
      for (const comment of comments) {
        assert.match(comment.id, /^[0-9a-f]{64}$/)
        assert.ok(comment.block >= post.height && comment.block <= dataset.height)
        assert.equal(dataset.usersByAddress.get(comment.address)?.deleted, false)
        assert.deepEqual(Object.keys(JSON.parse(comment.msg)), ['message', 'url', 'images'])
        if (comment.parentid === '') {
          assert.equal(comment.answerid, '')
          continue
        }
        const parent = ids.get(comment.parentid) as CommentRecord
        const answered = ids.get(comment.answerid) as CommentRecord
        assert.equal(parent.postid, post.hash)
        assert.equal(parent.parentid, '')
        assert.ok(answered === parent || answered.parentid === parent.id)
        assert.ok(comment.block >= answered.block)
      }
    }
    assert.ok(dataset.comments.some(comment => comment.parentid !== ''))
    assert.ok(dataset.comments.some(comment => comment.donation > 0))
  })
})

describe('the emulator\'s public methods', () => {
  describe('getcomments', () => {
    it('answers every top-level comment of a post, unpaged, numbers as strings', async (t) => {
      const node = await startEmulator(t)
      const { postid, top, parent, replies } = postWithThreads(node.dataset)
      const { status, body } = await rpc(node.url, 'getcomments', [postid])
      assert.equal(status, 200)
      assert.equal(body.result.length, top.length)
      const first = body.result.find((item: { id: string }) => item.id === parent.id)
      const keys = ['id', 'postid', 'address', 'time', 'timeUpd', 'block', 'msg', 'scoreUp', 'scoreDown', 'reputation', 'children', 'flags', 'deleted', 'edit']
      if (parent.donation > 0) keys.splice(11, 0, 'amount', 'donation')
      // A comment nobody rated has no rating: the node leaves the key out.
      if (parent.reputation === 0) keys.splice(9, 1)
      assert.deepEqual(Object.keys(first), keys)
      assert.deepEqual(first, {
        ...first,
        postid,
        address: parent.address,
        time: String(parent.time),
        timeUpd: String(parent.time),
        block: String(parent.block),
        msg: parent.msg,
        scoreUp: String(parent.scoreUp),
        scoreDown: String(parent.scoreDown),
        ...(parent.reputation === 0 ? {} : { reputation: String(parent.reputation) }),
        children: String(replies.length),
        flags: {},
        deleted: false,
        edit: false,
      })
      for (const item of body.result) {
        assert.equal(item.parentid, undefined, 'a top-level comment has no parentid key')
        for (const key of ['time', 'block', 'scoreUp', 'scoreDown', 'children']) assert.equal(typeof item[key], 'string')
        if ('reputation' in item) assert.equal(typeof item.reputation, 'string')
      }
    })

    it('answers the replies of a comment with parentid and answerid, and adds myScore for a known viewer', async (t) => {
      const node = await startEmulator(t)
      const { postid, parent, replies } = postWithThreads(node.dataset)
      const result = (await rpc(node.url, 'getcomments', [postid, parent.id])).body.result
      assert.deepEqual(result.map((item: { id: string }) => item.id).sort(), replies.map(reply => reply.id).sort())
      for (const item of result) {
        assert.equal(item.parentid, parent.id)
        assert.equal(item.answerid, replies.find(reply => reply.id === item.id)?.answerid)
        assert.equal(item.children, '0')
      }
      const viewer = node.dataset.users[0]?.address as string
      const seen = (await rpc(node.url, 'getcomments', [postid, '', viewer])).body.result
      assert.ok(seen.length > 0 && seen.every((item: { myScore: string }) => item.myScore === '0'))
      assert.deepEqual((await rpc(node.url, 'getcomments', [postid, '', UNKNOWN_ADDRESS])).body.result, [], 'a viewer the chain never saw matches nothing')
      assert.deepEqual((await rpc(node.url, 'getcomments', ['f'.repeat(64)])).body.result, [])
    })

    it('fails by ids on 0.22.7 (its query does not prepare) and answers them on 0.22.6, numbers as numbers', async (t) => {
      const node = await startEmulator(t)
      const { parent, replies } = postWithThreads(node.dataset)
      const ids = [replies[0]?.id as string, 'f'.repeat(64), parent.id]
      await rejects(node.url, 'getcomments', ['', '', '', ids], 500, 500, /^SQLiteDatabase: Failed to setup SQL statements: SQL logic error/)

      const old = await startEmulator(t, { version: '0.22.6' })
      const { status, body } = await rpc(old.url, 'getcomments', ['', '', '', ids])
      assert.equal(status, 200)
      const wanted = [parent, replies[0] as CommentRecord].sort(byId)
      assert.deepEqual(body.result.map((item: { id: string }) => item.id), wanted.map(comment => comment.id), 'ordered by hash, unknown ids absent')
      const reply = body.result.find((item: { id: string }) => item.id === replies[0]?.id)
      assert.equal(reply.type, 204)
      assert.equal(reply.time, replies[0]?.time)
      assert.equal(reply.scoreUp, replies[0]?.scoreUp)
      assert.equal(reply.parentid, parent.id)
      assert.equal(reply.flags, undefined)
      const top = (await rpc(old.url, 'getcomments', [parent.postid])).body.result
      assert.ok(top.length > 0 && top.every((item: { flags?: unknown }) => item.flags === undefined), 'flags came with 0.22.7')
    })

    it('reads its params as the node does', async (t) => {
      const node = await startEmulator(t)
      const { postid } = postWithThreads(node.dataset)
      assert.deepEqual((await rpc(node.url, 'getcomments', [])).body.result, [])
      assert.deepEqual((await rpc(node.url, 'getcomments', ['', '', ''])).body.result, [], '"" is allowed from three params on')
      assert.deepEqual((await rpc(node.url, 'getcomments', [postid, '', '', []])).body.result.length, (await rpc(node.url, 'getcomments', [postid])).body.result.length, 'empty ids: by post')
      await rejects(node.url, 'getcomments', [''], 500, -32602, /^Invalid postid$/)
      await rejects(node.url, 'getcomments', ['', ''], 500, -32602, /^Invalid postid$/)
      await rejects(node.url, 'getcomments', [42], 500, -32603, /^JSON value is not a string as expected$/)
      await rejects(node.url, 'getcomments', [postid, null], 500, -32603, /not a string/)
      await rejects(node.url, 'getcomments', [postid, '', null], 500, -32603, /not a string/)
      await rejects(node.url, 'getcomments', [postid, '', '', null], 500, -32602, /^Invalid inputs params$/)
      await rejects(node.url, 'getcomments', [postid, '', '', 'abc'], 500, -32602, /^Invalid inputs params$/)
      await rejects(node.url, 'getcomments', [postid, '', '', [7]], 500, -32603, /not a string/)
    })
  })

  describe('getuserstate', () => {
    const LIVE_KEYS = [
      'address_id', 'address', 'post_spent', 'video_spent', 'article_spent', 'stream_spent', 'audio_spent', 'comment_spent', 'score_spent',
      'comment_score_spent', 'complain_spent', 'mod_flag_spent', 'mode', 'trial', 'reputation', 'badges', 'user_reg_date', 'user_reg_height',
      'balance', 'likers', 'post_unspent', 'video_unspent', 'article_unspent', 'stream_unspent', 'audio_unspent', 'complain_unspent',
      'comment_unspent', 'comment_score_unspent', 'score_unspent', 'mod_flag_unspent',
    ]

    it('answers the account\'s limits and standing', async (t) => {
      const node = await startEmulator(t)
      const user = node.dataset.users.find(candidate => !candidate.deleted && candidate.reputation > 0) as UserRecord
      const { status, body } = await rpc(node.url, 'getuserstate', [user.address])
      assert.equal(status, 200)
      const state = body.result
      assert.deepEqual(Object.keys(state), LIVE_KEYS)
      assert.equal(state.address, user.address)
      assert.equal(state.address_id, user.id)
      assert.equal(state.reputation, user.reputation)
      assert.equal(state.likers, user.likers)
      assert.equal(state.user_reg_date, user.regdate)
      assert.equal(state.balance, node.dataset.accounts.get(user.id)?.balance)
      assert.ok([0, 1, 2].includes(state.mode))
      assert.equal(state.trial, state.mode === 0)
      assert.ok(Number.isInteger(state.balance) && Number.isInteger(state.user_reg_height))
      const limit = state.mode === 0 ? 5 : 30
      assert.equal(state.post_spent + state.post_unspent, limit)
    })

    it('answers a deleted account without the spent and unspent counts', async (t) => {
      const node = await startEmulator(t)
      const deleted = node.dataset.users.find(user => user.deleted) as UserRecord
      const state = (await rpc(node.url, 'getuserstate', [deleted.address])).body.result
      assert.deepEqual(Object.keys(state), ['address_id', 'address', 'deleted', 'mode', 'trial', 'reputation', 'badges', 'user_reg_date', 'user_reg_height', 'balance', 'likers'])
      assert.equal(state.deleted, true)
    })

    it('answers -5 for an address with no account or a malformed one, -3 for a non-string', async (t) => {
      const node = await startEmulator(t)
      await rejects(node.url, 'getuserstate', [UNKNOWN_ADDRESS], 500, -5, /^Pocketcoin address not found : P8bb/)
      await rejects(node.url, 'getuserstate', ['Pnot-an-address'], 500, -5, /^Invalid Pocketcoin address: Pnot-an-address$/)
      await rejects(node.url, 'getuserstate', [], 500, -5, /^Invalid or empty Pocketcoin address$/)
      await rejects(node.url, 'getuserstate', [42], 500, -3, /^Expected type string, got number$/)
      await rejects(node.url, 'getuserstate', [null], 500, -3, /^Expected type string, got null$/)
    })
  })

  describe('gettags', () => {
    /** The dataset's tags of one language with their post counts, most used first. */
    function tagsIn (dataset: Dataset, lang: string): Array<{ tag: string, count: number }> {
      const counts = new Map<string, number>()
      for (const post of dataset.posts) if (post.language === lang) for (const tag of post.tags) counts.set(tag, (counts.get(tag) ?? 0) + 1)
      return [...counts].map(([tag, count]) => ({ tag, count })).sort((a, b) => b.count - a.count || (a.tag < b.tag ? -1 : 1))
    }

    it('answers [{tag, count}] by count, for paging sent as strings, filtered by language', async (t) => {
      const node = await startEmulator(t)
      const english = tagsIn(node.dataset, 'en')
      const { status, body } = await rpc(node.url, 'gettags', ['0', '5', null, 'en'])
      assert.equal(status, 200)
      assert.deepEqual(body.result, english.slice(0, 5))
      assert.deepEqual((await rpc(node.url, 'gettags', ['2', '3'])).body.result, english.slice(2, 5), 'an item offset; en by default')
      assert.deepEqual((await rpc(node.url, 'gettags', [])).body.result, english.slice(0, 50))
      assert.deepEqual((await rpc(node.url, 'gettags', ['0', '50', 'ignored', 'zh'])).body.result, tagsIn(node.dataset, 'zh').slice(0, 50))
      assert.deepEqual((await rpc(node.url, 'gettags', ['0', '50', null, 'xx'])).body.result, [])
    })

    it('parses the strings as the node does: strtol\'s leading digits, "" and padding change nothing, negative size is no limit', async (t) => {
      const node = await startEmulator(t)
      const english = tagsIn(node.dataset, 'en')
      assert.deepEqual((await rpc(node.url, 'gettags', ['0', '2x'])).body.result, english.slice(0, 2))
      assert.deepEqual((await rpc(node.url, 'gettags', ['0', 'abc'])).body.result, [])
      assert.deepEqual((await rpc(node.url, 'gettags', ['', ' 2'])).body.result, english.slice(0, 50))
      assert.deepEqual((await rpc(node.url, 'gettags', ['-4', '-1'])).body.result, english)
    })

    it('answers -32603 for a number or null where it reads a string', async (t) => {
      const node = await startEmulator(t)
      await rejects(node.url, 'gettags', [0, 50], 500, -32603, /^JSON value is not a string as expected$/)
      await rejects(node.url, 'gettags', ['0', 50], 500, -32603, /not a string/)
      await rejects(node.url, 'gettags', [null], 500, -32603, /not a string/)
      await rejects(node.url, 'gettags', ['0', '50', null, null], 500, -32603, /not a string/)
      assert.equal(node.callsTo('gettags').length, 4, 'failed calls are recorded too')
      assert.deepEqual(node.callsTo('gettags')[0]?.params, [0, 50])
    })
  })

  describe('getusersubscribers and getusersubscribes', () => {
    /** A dataset in which one account has 15 subscribers and follows 12 accounts. */
    function popularDataset (): { dataset: Dataset, star: UserRecord } {
      const dataset = generateDataset({ users: 40 })
      const live = dataset.users.filter(user => !user.deleted)
      const star = live[0] as UserRecord
      for (const user of live.slice(1, 16)) {
        if (!star.subscribers.includes(user.address)) star.subscribers.push(user.address)
        if (!user.subscribes.includes(star.address)) user.subscribes.push(star.address)
      }
      for (const user of live.slice(20, 32)) {
        if (!star.subscribes.includes(user.address)) star.subscribes.push(user.address)
        if (!user.subscribers.includes(star.address)) user.subscribers.push(star.address)
      }
      return { dataset, star }
    }

    it('answers {address, private, reputation, height}, newest first, and `adddress` for subscribes', async (t) => {
      const { dataset, star } = popularDataset()
      const node = await startEmulator(t, { dataset })
      const subscribers = (await rpc(node.url, 'getusersubscribers', [star.address, 'height', true, 0, 0])).body.result
      assert.equal(subscribers.length, star.subscribers.length)
      assert.deepEqual(Object.keys(subscribers[0]), ['address', 'private', 'reputation', 'height'])
      assert.deepEqual(subscribers.map((row: { address: string }) => row.address).sort(), [...star.subscribers].sort())
      for (const row of subscribers) {
        const follower = dataset.usersByAddress.get(row.address) as UserRecord
        assert.equal(row.private, 0)
        assert.equal(row.reputation, Math.round(follower.reputation * 10), 'the stored value, ten times the profile\'s')
        assert.ok(Number.isInteger(row.height) && row.height <= dataset.height)
      }
      const heights = subscribers.map((row: { height: number }) => row.height)
      assert.deepEqual(heights, [...heights].sort((a, b) => b - a))
      const ascending = (await rpc(node.url, 'getusersubscribers', [star.address, 'height', false, 0, 0])).body.result.map((row: { height: number }) => row.height)
      assert.deepEqual(ascending, [...heights].sort((a, b) => a - b))
      const byReputation = (await rpc(node.url, 'getusersubscribers', [star.address, 'REPUTATION', true, 0, 0])).body.result.map((row: { reputation: number }) => row.reputation)
      assert.deepEqual(byReputation, [...byReputation].sort((a, b) => b - a))

      const subscribes = (await rpc(node.url, 'getusersubscribes', [star.address, 'height', true, 0, 0])).body.result
      assert.equal(subscribes.length, star.subscribes.length)
      assert.deepEqual(Object.keys(subscribes[0]), ['adddress', 'private', 'reputation', 'height'])
      assert.deepEqual(subscribes.map((row: { adddress: string }) => row.adddress).sort(), [...star.subscribes].sort())
    })

    it('gives 10 rows without a limit and every row for any number there; a number at offset changes nothing', async (t) => {
      const { dataset, star } = popularDataset()
      const node = await startEmulator(t, { dataset })
      const all = (await rpc(node.url, 'getusersubscribers', [star.address, 'height', true, 0, 0])).body.result
      assert.ok(all.length > 10)
      assert.deepEqual((await rpc(node.url, 'getusersubscribers', [star.address])).body.result, all.slice(0, 10))
      assert.deepEqual((await rpc(node.url, 'getusersubscribers', [star.address, 'height', true, 5])).body.result, all.slice(0, 10))
      assert.deepEqual((await rpc(node.url, 'getusersubscribers', [star.address, 'height', true, 5, 3])).body.result, all)
      assert.deepEqual((await rpc(node.url, 'getusersubscribers', [star.address, 'height', true, '5', '3'])).body.result, all.slice(0, 10), 'strings are ignored')
      assert.equal((await rpc(node.url, 'getusersubscribes', [star.address])).body.result.length, 10)
      assert.equal((await rpc(node.url, 'getusersubscribes', [star.address, 'height', true, 0, 1])).body.result.length, star.subscribes.length)
    })

    it('answers [] for an unknown address, -3 for a non-string, -32603 when it is missing', async (t) => {
      const node = await startEmulator(t)
      for (const method of ['getusersubscribers', 'getusersubscribes']) {
        assert.deepEqual((await rpc(node.url, method, [UNKNOWN_ADDRESS])).body.result, [])
        assert.deepEqual((await rpc(node.url, method, ['not an address'])).body.result, [])
        await rejects(node.url, method, [42], 500, -3, /^Expected type string, got number$/)
        await rejects(node.url, method, [], 500, -32603, /^JSON value is not a string as expected$/)
        await rejects(node.url, method, [UNKNOWN_ADDRESS, 'height', true, 0, 10.5], 500, -32603, /^JSON integer out of range$/)
      }
    })
  })

  describe('getapps', () => {
    it('answers [] for any request object, and fails on what is not one as the node does', async (t) => {
      const node = await startEmulator(t)
      assert.deepEqual(await rpc(node.url, 'getapps', [{}]), { status: 200, body: { result: [], error: null, id: 3 } })
      assert.deepEqual((await rpc(node.url, 'getapps', [{ tags: ['games'], search: 'chess', pageStart: 1, PAGESIZE: 20, orderBy: 'rating' }])).body.result, [])
      await rejects(node.url, 'getapps', ['{}'], 500, -3, /^Expected type object, got string$/)
      await rejects(node.url, 'getapps', [[]], 500, -3, /^Expected type object, got array$/)
      await rejects(node.url, 'getapps', [null], 500, -3, /^Expected type object, got null$/)
      await rejects(node.url, 'getapps', [], 500, -32603, /^JSON value is not an object as expected$/)
      await rejects(node.url, 'getapps', [{ tags: [1] }], 500, -32603, /not a string/)
      await rejects(node.url, 'getapps', [{ pagesize: 10.5 }], 500, -32603, /^JSON integer out of range$/)
    })

    it('answers getappscores and getappcomments [] when the request names an app, -32602 when not', async (t) => {
      const node = await startEmulator(t)
      for (const method of ['getappscores', 'getappcomments']) {
        assert.deepEqual((await rpc(node.url, method, [{ app: 'f'.repeat(64) }])).body.result, [])
        await rejects(node.url, method, [{}], 500, -32602, /^Missing 'app' parameter$/)
        await rejects(node.url, method, [5], 500, -3, /^Expected type object, got number$/)
      }
    })
  })

  describe('the feeds', () => {
    const hashes = (answer: { body: { result: { contents: Array<{ hash: string }> } } }): string[] => answer.body.result.contents.map(item => item.hash)

    it('answer {height, contents}: the newest posts of live authors, as many as asked, in a language if one is named, each as getcontent gives it', async (t) => {
      const node = await startEmulator(t)
      const { posts, usersByAddress } = node.dataset
      const live = posts.filter(post => usersByAddress.get(post.address)?.deleted === false)
      const feed = await rpc(node.url, 'gethistoricalfeed', [0, '', 3])
      assert.equal(feed.body.result.height, node.height)
      assert.deepEqual(hashes(feed), live.slice(0, 3).map(post => post.hash))
      assert.deepEqual(feed.body.result.contents[0], (await rpc(node.url, 'getcontent', [[live[0]?.hash]])).body.result[0])
      assert.equal(hashes(await rpc(node.url, 'gethierarchicalfeed', [])).length, 10)
      const french = await rpc(node.url, 'gethistoricalstrip', [0, '', 100, 'fr'])
      assert.ok(french.body.result.contents.length > 0)
      assert.ok(french.body.result.contents.every((item: { l: string }) => item.l === 'fr'))
      const commented = (await rpc(node.url, 'getmostcommentedfeed', [0, '', 5])).body.result.contents.map((item: { comments: number }) => item.comments)
      assert.deepEqual(commented, [...commented].sort((a, b) => b - a))
      // A count that is not a whole number is not read: the default.
      assert.equal(hashes(await rpc(node.url, 'gettopfeed', [0, '', 'ten'])).length, 10)
    })

    it('answer an author\'s posts and an account\'s subscriptions, and refuse a feed that names no one', async (t) => {
      const node = await startEmulator(t)
      const { posts, users } = node.dataset
      const author = users.find(user => !user.deleted && posts.filter(post => post.address === user.address).length >= 2) as UserRecord
      const profile = await rpc(node.url, 'getprofilefeed', [0, '', 100, '', [], [], [], [], [], '', author.address])
      assert.deepEqual(hashes(profile), posts.filter(post => post.address === author.address).map(post => post.hash))
      const reader = users.find(user => !user.deleted && user.subscribes.length > 0) as UserRecord
      const subscribed = await rpc(node.url, 'getsubscribesfeed', [0, '', 100, '', [], [], [], [], [], '', reader.address])
      assert.ok(hashes(subscribed).length > 0)
      for (const item of subscribed.body.result.contents as Array<{ address: string }>) assert.ok(reader.subscribes.includes(item.address))
      assert.deepEqual((await rpc(node.url, 'getprofilefeed', [0, '', 10, '', [], [], [], [], [], '', UNKNOWN_ADDRESS])).body.result, { height: node.height, contents: [] })
      await rejects(node.url, 'getprofilefeed', [0, '', 10], 400, -32600, /^No profile address$/)
      await rejects(node.url, 'getsubscribesfeed', [0, '', 10], 400, -32600, /^No profile or addresses_extended addresses$/)
      await rejects(node.url, 'getprofilefeed', [0, '', 10, '', [], [], [], [], [], '', 'nobody'], 500, -5, /^Invalid Pocketcoin address: nobody$/)
      const [drawn] = (await rpc(node.url, 'getrandomcontents', [])).body.result as Array<{ hash: string }>
      assert.ok(posts.some(post => post.hash === drawn?.hash))
    })
  })

  describe('the other public methods', () => {
    it('knows the 92 names of the read path', () => {
      assert.equal(Object.keys(PUBLIC_METHODS).length, 92)
      for (const name of IMPLEMENTED_METHODS) assert.ok(Object.hasOwn(PUBLIC_METHODS, name), name)
    })

    it('answers each name it has no data for with HTTP 200 and the node\'s answer with nothing to report, or the node\'s error for a missing param', async (t) => {
      const node = await startEmulator(t)
      const empty = { array: [], object: {}, string: '' }
      // The node's answer with nothing to report has fields for these (devnode/methods/other.ts).
      const structured = new Set(['getboostfeed', 'getcoininfo', 'getlateststat', 'getposdifficulty', 'getrecommendedcontentbyaddress', 'getstatisticbyhours', 'getstatisticcontentbydays', 'getstatisticcontentbyhours', 'gettime', 'getaccountearning', 'help'])
      const others = Object.entries(PUBLIC_METHODS).filter(([name, { status }]) => !IMPLEMENTED_METHODS.has(name) && (status === 'ok' || status === 'stub'))
      assert.equal(others.length, 92 - IMPLEMENTED_METHODS.size - 7)
      for (const [name, { result }] of others) {
        const missing = WITHOUT_PARAMS[name]
        const answer = await rpc(node.url, name, [])
        if (missing !== undefined) {
          assert.deepEqual(answer, { status: missing.status ?? 500, body: { result: null, error: { code: missing.code, message: missing.message }, id: 3 } }, name)
        } else if (structured.has(name)) {
          assert.equal(answer.status, 200, name)
          assert.equal(typeof answer.body.result, result === 'array' ? 'object' : result, name)
          assert.notDeepEqual(answer.body.result, empty[result], `${name} answers with the node's fields`)
        } else {
          assert.deepEqual(answer, { status: 200, body: { result: empty[result], error: null, id: 3 } }, name)
        }
      }
      // Spot checks that do not rely on the tables.
      const spots = [
        ['gethotposts', [], []], ['getrecommendedposts', [], []], ['getaddressid', [UNKNOWN_ADDRESS], {}], ['getaccountsetting', [UNKNOWN_ADDRESS], ''],
        ['getaddressinfo', [UNKNOWN_ADDRESS], { lastChange: 0, balance: 0 }], ['getcontentactions', ['a'.repeat(64)], { scores: [], boosts: [], donations: [] }],
        ['getaccountearning', [UNKNOWN_ADDRESS], [{ address: '', amountLottery: 0, amountDonation: 0, amountTransfer: 0 }]],
        ['searchbyhash', [UNKNOWN_ADDRESS], { type: 'address' }], ['searchbyhash', ['a'.repeat(64)], { type: 'transaction' }],
        ['getboostfeed', [], { height: node.height, boosts: [] }],
      ] as const
      for (const [name, params, value] of spots) assert.deepEqual((await rpc(node.url, name, [...params])).body.result, value, name)
      assert.match((await rpc(node.url, 'help', [])).body.result, /^== Public ==\n(?:.*\n)*getnodeinfo\n/)
      await rejects(node.url, 'getrawtransaction', [], 500, -32603, /^JSON value is not a string as expected$/)
      await rejects(node.url, 'getprofilefeed', [], 400, -32600, /^No profile address$/)
    })

    it('fails the broken and testnet-only ones as the node does', async (t) => {
      const node = await startEmulator(t)
      await rejects(node.url, 'getbalancehistory', [UNKNOWN_ADDRESS], 500, -32603, /^Reimplementation required because of new db structure$/)
      assert.deepEqual((await rpc(node.url, 'gettopaccounts', [])).body.result, [])
      await rejects(node.url, 'gettopaccounts', [0, 15, 'en', [], 'share'], 500, 500, /^SQLiteDatabase: Failed to setup SQL statements/)
      await rejects(node.url, 'gettopaccounts', [0, 15, 'en', [], 'share', [], [], '100'], 500, -3, /^Expected type number, got string$/)
      await rejects(node.url, 'getprofilecollections', [], 400, -32600, /^No profile address$/)
      await rejects(node.url, 'getrecommendedaccountbyaddress', [UNKNOWN_ADDRESS], 500, 500, /^SQLiteDatabase: Failed to setup SQL statements/)
      await rejects(node.url, 'getprofilecollections', [0, '', 10, '', [], [], [], [], [], '', 'nope'], 500, -5, /^Invalid Pocketcoin address: nope$/)
      await rejects(node.url, 'getprofilecollections', [0, '', 10, '', [], [], [], [], [], null, UNKNOWN_ADDRESS], 500, -3, /^Expected type string, got null$/)
      await rejects(node.url, 'getprofilecollections', [0, '', 10, '', [], [], [], [], [], '', UNKNOWN_ADDRESS], 500, 500, /^SQLiteDatabase: Failed to setup SQL statements/)
      for (const name of ['generateaddress', 'generatetransaction', 'generatepocketnettransaction']) {
        await rejects(node.url, name, [], 500, -32603, /^Only for testnet/)
      }
    })

    it('answers a name the node does not serve with HTTP 404 and -32601, and read methods on /post/ alike', async (t) => {
      const node = await startEmulator(t)
      for (const name of ['nosuchmethod', 'getinfo', 'getblockcount', 'sendrawtransaction', 'GETCOMMENTS', 'toString', '__proto__']) {
        assert.deepEqual(await rpc(node.url, name, []), { status: 404, body: { result: null, error: { code: -32601, message: 'Method not found' }, id: 3 } }, name)
      }
      for (const name of ['getcomments', 'gettags', 'gethotposts']) assert.equal((await rpc(node.url, name, [], '/post/')).status, 404, name)
      assert.equal(node.callsTo('nosuchmethod').length, 1)
    })
  })
})
