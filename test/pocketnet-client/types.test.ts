/**
 * Type-level tests of the client's typed surface: what a caller may write compiles, and what it
 * must not write does not (`@ts-expect-error` fails the type check, `npm run typecheck`, when the
 * line after it compiles). The calls are only type-checked: `typed` is never called.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ContentPage, PocketNetProxyApi, RawSearchResult, UserProfile } from '../../packages/pocketnet-client/index.js'
import type { GetmissedinfoResult, GetpagescoresResult, GetcontentResult } from '../../packages/pocketnet-client/methods/table-rpc.js'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
const exactly = <A, B>(_proof: Equal<A, B>): void => {}
/** Marks a value as used. */
const use = (..._values: unknown[]): void => {}

async function typed (api: PocketNetProxyApi): Promise<void> {
  const { rpc } = api
  // Params by the node's names, required ones required.
  await rpc.getcontents({ address: 'P…' })
  // @ts-expect-error address is required
  await rpc.getcontents({})
  // @ts-expect-error no such param
  await rpc.getcontents({ address: 'P…', count: 1 })
  // @ts-expect-error a number where the node reads a string
  await rpc.getcontents({ address: 1 })
  // Methods without required params take none at all.
  await rpc.getlastblocks()
  await rpc.getlastblocks({ count: 5, verbose: true })
  // @ts-expect-error verbose must be a JSON boolean
  await rpc.getlastblocks({ verbose: 1 })
  // @ts-expect-error getcontent's last takes 1 only
  await rpc.getcontent({ hashes: ['a'], last: 2 })
  // @ts-expect-error broken on 0.22 nodes: not on the typed surface
  await rpc.getbalancehistory({ addresses: ['P…'] })
  // @ts-expect-error a stub: not on the typed surface
  await rpc.getrecommendedposts({})

  // Results as precise as the table: fields it names, optional where the node leaves them out.
  const contents = await rpc.getcontents({ address: 'P…' })
  exactly<typeof contents[number]['txid'], unknown>(true)
  // @ts-expect-error a field the table does not name
  use(contents[0]?.nope)
  const content: GetcontentResult[number] = null
  use(content)
  const comments = await rpc.getcomments({ postid: 'h' })
  // @ts-expect-error reputation may be absent (found on a real 0.22.7 node): it is optional
  const reputation: NonNullable<unknown> = comments[0]!.reputation
  use(reputation)
  // Mixed lists are unions; getmissedinfo's first item is its own kind.
  const scores: GetpagescoresResult = [{ posttxid: 'h', value: 5 }, { cmntid: 'c', scoreUp: 1, scoreDown: 0, myScore: 0 }]
  use(scores)
  const missed: GetmissedinfoResult = [{ block: 1, cntposts: 0, contentsLang: {} }, { msg: 'event' }]
  use(missed)
  // @ts-expect-error getmissedinfo always starts with its head item
  const empty: GetmissedinfoResult = []
  use(empty)

  // The hand-written methods: search's result follows its type.
  exactly<Awaited<ReturnType<typeof rpc.search<'content'>>>, ContentPage>(true)
  exactly<Awaited<ReturnType<typeof rpc.search<'users'>>>, RawSearchResult>(true)
  exactly<Awaited<ReturnType<typeof rpc.getuserprofile>>, UserProfile[]>(true)
  // @ts-expect-error tags is broken on 0.22 nodes: not a search type
  await rpc.search({ keyword: 'x', type: 'tags' })
}

describe('the typed surface', () => {
  it('is checked by the type check (npm run typecheck), not at run time', () => {
    assert.equal(typeof typed, 'function')
  })
})
