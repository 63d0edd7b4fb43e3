import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { blockActivity } from '../../../packages/pocketnet-client/events/block-notifications.js'

const ALICE = 'PAliceAliceAliceAliceAliceAlice111'
const BOB = 'PBobBobBobBobBobBobBobBobBobBob1111'
const CAROL = 'PCarolCarolCarolCarolCarolCarol111'
const POST = 'p'.repeat(64)
const OTHER_POST = 'q'.repeat(64)
const BLOCK = { height: 3000, blockHash: 'b'.repeat(64), time: 1_700_000_000 }

/** One block's getnotifications answer, in the node's shape. */
const ANSWER = {
  data: [
    {
      hash: 'tx-pay',
      txType: 1,
      height: 3000,
      blockNum: 1,
      time: 1_700_000_010,
      inputs: [{ number: 0, value: 1000, addresshash: BOB, scriptpubkey: '' }],
      outputs: [{ value: 0, scriptpubkey: '6a00' }, { addresshash: ALICE, value: 600, scriptpubkey: '' }, { addresshash: BOB, value: 390, scriptpubkey: '' }, { addresshash: ALICE, value: 5, scriptpubkey: '' }],
    },
    {
      hash: 'tx-comment-v2',
      txType: 204,
      address: CAROL,
      height: 3000,
      blockNum: 2,
      time: 1_700_000_020,
      rootTxHash: 'tx-comment',
      postHash: POST,
      outputs: [{ addresshash: ALICE, value: 70, scriptpubkey: '' }],
      account: { n: 'carol', a: 'https://a/c.png', b: '', r: 12 },
      relatedContent: { hash: POST, txType: 200 },
    },
    {
      hash: 'tx-answer', txType: 204, address: CAROL, height: 3000, blockNum: 3, rootTxHash: 'tx-answer', postHash: POST, commentParentId: 'c1', commentAnswerId: 'c2', account: { n: 'carol', a: '', b: '', r: 12 },
    },
    { hash: 'tx-score', txType: 301, address: BOB, height: 3000, blockNum: 4, time: 1_700_000_040, val: -1, account: { n: 'bob', a: '', b: '', r: 0 }, relatedContent: { hash: 'tx-comment', txType: 204, postHash: OTHER_POST } },
    { hash: 'tx-sub', txType: 303, address: BOB, height: 3000, blockNum: 5, time: 1_700_000_050 },
    { hash: 'tx-bad-pay', txType: 1, outputs: [{ addresshash: CAROL, value: '12.5' }] },
  ],
  notifiers: {
    [ALICE]: { e: { money: [0], comment: [1], subscriber: [4] } },
    [BOB]: { i: { n: 'bob' }, e: { money: [0], answer: [2] } },
    [CAROL]: { e: { commentscore: [3], money: [5, 99] } },
  },
}

describe('a block\'s notifications, for what is of interest', () => {
  it('gives each address of interest its payments (first output, integer satoshi) and its social events in the node\'s words', () => {
    const activity = blockActivity(ANSWER, BLOCK, { addresses: new Set([ALICE]), contents: new Set() })
    const stamp = { height: 3000, blockHash: BLOCK.blockHash }
    assert.deepEqual(activity.transactions, [{ kind: 'transaction', address: ALICE, txid: 'tx-pay', nout: 1, amount: 600, ...stamp, time: 1_700_000_010 }])
    assert.deepEqual(activity.notifications, [
      {
        kind: 'notification',
        address: ALICE,
        type: 'comment',
        txid: 'tx-comment',
        ...stamp,
        time: 1_700_000_020,
        data: { category: 'comment', addrFrom: CAROL, nameFrom: 'carol', avatarFrom: 'https://a/c.png', reason: 'post', posttxid: POST, parentid: '', answerid: '', donation: true, amount: 70 },
      },
      { kind: 'notification', address: ALICE, type: 'subscribePrivate', txid: 'tx-sub', ...stamp, time: 1_700_000_050, data: { category: 'subscriber', addrFrom: BOB } },
    ])
    // Carol's index 99 points at no entry: a broken answer whoever is of interest.
    assert.equal(activity.malformed, 1)
  })

  it('reports nothing for addresses that are not of interest, and makes no events when nothing is', () => {
    const none = blockActivity(ANSWER, BLOCK, { addresses: new Set(), contents: new Set() })
    assert.deepEqual([none.transactions, none.notifications], [[], []])
    const bob = blockActivity(ANSWER, BLOCK, { addresses: new Set([BOB]), contents: new Set() })
    assert.deepEqual(bob.transactions.map(event => [event.address, event.nout, event.amount]), [[BOB, 2, 390]])
    assert.deepEqual(bob.notifications.map(event => [event.address, event.type, event.data.reason, event.data.parentid, event.time]), [[BOB, 'comment', 'answer', 'c1', BLOCK.time]])
  })

  it('reports the events on a post of interest once per transaction, whoever they notify', () => {
    const forPost = blockActivity(ANSWER, BLOCK, { addresses: new Set(), contents: new Set([POST, OTHER_POST]) })
    assert.deepEqual(forPost.notifications.map(event => [event.txid, event.address, event.type]), [
      ['tx-comment', ALICE, 'comment'], ['tx-answer', BOB, 'comment'], ['tx-score', CAROL, 'cScore'],
    ])
    assert.deepEqual(forPost.notifications[2]?.data, { category: 'commentscore', addrFrom: BOB, nameFrom: 'bob', commentid: 'tx-comment', posttxid: OTHER_POST, upvoteVal: -1 })
    const both = blockActivity(ANSWER, BLOCK, { addresses: new Set([BOB]), contents: new Set([POST]) })
    assert.deepEqual(both.notifications.map(event => [event.txid, event.address]), [['tx-answer', BOB], ['tx-comment', ALICE]])
  })

  it('skips entries without the protocol\'s fields, counting them, and refuses an answer of another shape', () => {
    const carol = blockActivity(ANSWER, BLOCK, { addresses: new Set([CAROL]), contents: new Set() })
    assert.deepEqual(carol.transactions, [])
    assert.equal(carol.malformed, 2)
    for (const answer of [null, [], { data: [] }, { data: {}, notifiers: {} }]) {
      assert.throws(() => blockActivity(answer, BLOCK, { addresses: new Set([ALICE]), contents: new Set() }), { code: 'EVENTS_ERR_BAD_MESSAGE' })
    }
  })
})
