/**
 * What a node pushes to its WebSocket clients when a block connects (docs/node-events.md,
 * "Messages"): a `new block` message to every registered socket, then, for the address a socket
 * watches, a `transaction` message per transaction paying it and an `event` message per social
 * event for it. Field names and JSON types as the node writes them: `time` is a string in
 * `new block` and a number elsewhere; `nout`, `amount` and every social field are strings.
 */
import type { ChainBlock, ChainNotification, ChainTransaction } from './chain.js'

export type NodeMessage = Record<string, unknown>

export function newBlockMessage (block: ChainBlock, watched: string): NodeMessage {
  const shares = block.transactions.filter(tx => tx.socialType === 'share' || tx.socialType === 'video' || tx.socialType === 'article').length
  return {
    addr: watched,
    // A proof-of-stake block's second transaction; the emulator's blocks are not staked.
    stakeTxHash: '',
    msg: 'new block',
    blockhash: block.hash,
    time: String(block.time),
    height: block.height,
    shares,
    contentsLang: {},
  }
}

/** The `transaction` messages of one transaction: one per distinct output address, for its first output to it. */
function transactionMessages (tx: ChainTransaction): Array<[string, NodeMessage]> {
  const firstOutput = new Map<string, number>()
  tx.outputs.forEach((output, index) => {
    if (output.address !== undefined && !firstOutput.has(output.address)) firstOutput.set(output.address, index)
  })
  return [...firstOutput].map(([address, nout]) => [address, {
    addr: address,
    msg: 'transaction',
    txid: tx.txid,
    time: tx.time,
    nout: String(nout),
    amount: String(tx.outputs[nout]?.amount ?? 0),
    ...(tx.socialType === undefined ? {} : { type: tx.socialType }),
  }])
}

/** The `event` message of one social event, with the fields the node gives its kind. */
export function eventMessage (event: ChainNotification): NodeMessage {
  const fields: Record<string, string> = { mesType: event.mesType, addrFrom: event.addrFrom, nameFrom: event.nameFrom }
  if (event.avatarFrom !== undefined) fields.avatarFrom = event.avatarFrom
  switch (event.mesType) {
    case 'comment':
    case 'commentEdit':
    case 'commentDelete':
      Object.assign(fields, {
        posttxid: event.posttxid ?? '',
        parentid: event.parentid ?? '',
        answerid: event.answerid ?? '',
        reason: event.reason ?? 'post',
      })
      if (event.donation !== undefined && (event.reason ?? 'post') === 'post') Object.assign(fields, { donation: 'true', amount: String(event.donation) })
      break
    case 'upvoteShare':
      Object.assign(fields, { posttxid: event.posttxid ?? '', upvoteVal: String(event.upvoteVal ?? 5) })
      break
    case 'cScore':
      Object.assign(fields, { commentid: event.commentid ?? '', upvoteVal: String(event.upvoteVal ?? 1) })
      break
    case 'contentBoost':
      Object.assign(fields, { posttxid: event.posttxid ?? '', boostAmount: String(event.boostAmount ?? 0), reason: 'boost' })
      break
    case 'reshare':
      Object.assign(fields, { txidRepost: event.posttxid ?? '' })
      break
  }
  return { addr: event.address, msg: 'event', txid: event.txid, time: event.time, ...fields }
}

/** Every message of `block` meant for one watched address, by address, in block order. */
export function addressMessages (block: ChainBlock): Map<string, NodeMessage[]> {
  const byAddress = new Map<string, NodeMessage[]>()
  const add = (address: string, message: NodeMessage): void => {
    const list = byAddress.get(address)
    if (list === undefined) byAddress.set(address, [message])
    else list.push(message)
  }
  for (const tx of block.transactions) for (const [address, message] of transactionMessages(tx)) add(address, message)
  for (const event of block.notifications) add(event.address, eventMessage(event))
  return byAddress
}
