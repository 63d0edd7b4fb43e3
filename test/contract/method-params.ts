/**
 * Valid params for every typed method, built from the real chain's dataset: a param is filled by
 * its name (an address, a post's hash, a height …), and a method whose params are a request object
 * gets one of its own. Optional params are left out unless they make the answer worth checking
 * (a feed for an author who has posts), so that what is checked is mostly the table's defaults.
 */
import type { Dataset } from './contract-node.js'

export interface ChainFacts {
  dataset: Dataset
  /** A block of the chain that holds a comment: its height and hash. */
  commentBlock: { height: number, hash: string }
  /** The tip's hash. */
  tipHash: string
}

/** Params by name, for any method that takes them. */
function byName (facts: ChainFacts): Record<string, unknown> {
  const [alice, bob] = facts.dataset.accounts as [Dataset['accounts'][number], Dataset['accounts'][number]]
  const post = alice.posts[0] as string
  return {
    address: alice.address,
    address_feed: alice.address,
    addresses: [alice.address, bob.address],
    addresses_extended: [bob.address],
    address_or_id: alice.address,
    addressExclude: bob.address,
    hashes: [...alice.posts, ...bob.posts],
    transactions: [facts.dataset.payments[0]?.txid, post],
    postHashes: alice.posts,
    commentHashes: alice.comments,
    postid: post,
    contentHash: post,
    txHash: post,
    string: post,
    txid: facts.dataset.payments[0]?.txid,
    blockHash: facts.commentBlock.hash,
    blockhash: facts.tipHash,
    block_number: facts.commentBlock.height - 1,
    jury: post,
    keyword: 'bitcoin',
    type: 'posts',
    user_name: alice.name,
    links: ['https://example.com/'],
    command: 'getnodeinfo',
    conf_target: 2,
  }
}

/** Methods whose params the names above do not cover, or cover with a value that tells nothing. */
function ownParams (facts: ChainFacts): Record<string, Record<string, unknown>> {
  const app = facts.dataset.accounts[0]?.posts[0]
  return {
    getnotifications: { height: facts.commentBlock.height },
    getapps: { request: {} },
    getappcomments: { request: { app } },
    getappscores: { request: { app } },
    getbarteronfeed: { request: {} },
    getbarterondeals: { request: {} },
    getbarteroncomplexdeals: { request: { mytag: 1 } },
    getbarteronoffersdetails: { request: { offerids: [] } },
    getbarteronoffersbyroottxhashes: { hashes: [app] },
    getcompactblock: { blockhash: facts.tipHash },
    getuserprofile: { address: facts.dataset.accounts.map(account => account.address) },
    // The feeds, for the first author: without an address some answer nothing on a small chain.
    getprofilefeed: { address_feed: facts.dataset.accounts[0]?.address },
    getsubscribesfeed: { address_feed: facts.dataset.accounts[0]?.address },
  }
}

/** The params to call `method` with: its own, or each required param's by its name. */
export function paramsFor (method: string, required: readonly string[], facts: ChainFacts): Record<string, unknown> {
  const own = ownParams(facts)[method]
  if (own !== undefined) return own
  const named = byName(facts)
  const params: Record<string, unknown> = {}
  for (const name of required) {
    if (!(name in named)) throw new Error(`no dataset value for ${method}'s required param ${name}: add one to test/contract/method-params.ts`)
    params[name] = named[name]
  }
  return params
}
