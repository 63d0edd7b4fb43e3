/**
 * `txunspent [[addresses], minconf, maxconf]`: the outputs to those addresses in blocks of the
 * chain that no transaction the node has seen spends, as a 0.22.7 node answers (measured on a
 * regtest node): the confirmation filters are not read, `confirmations` is the tip's height minus
 * the output's (0 in the tip block), and an output spent by a transaction in the mempool, or by one
 * a re-org dropped, is left out.
 */
import type { ChainHistory } from '../chain.js'
import { RpcError, getStr, isAddress, typeCheck } from './common.js'
import { pkoin, scriptOf } from './transactions.js'

export function txUnspent (chain: ChainHistory, params: unknown[]): Array<Record<string, unknown>> {
  const addresses = new Set<string>()
  if (params.length > 0) {
    typeCheck(params[0], 'array')
    for (const value of params[0] as unknown[]) {
      const address = getStr(value)
      if (!isAddress(address)) throw new RpcError(-5, `Invalid Pocketcoin address: ${address}`)
      addresses.add(address)
    }
  }
  if (addresses.size === 0) throw new RpcError(-5, 'Invalid Pocketcoin addresses')
  const tip = chain.height
  return chain.unspentOutputs(addresses).map(coin => {
    const height = coin.block?.height as number
    return {
      txid: coin.transaction.txid,
      vout: coin.vout,
      address: coin.output.address,
      amount: pkoin(coin.output.amount),
      amountSat: coin.output.amount,
      scriptPubKey: scriptOf(coin.output.address as string),
      coinbase: coin.transaction.txType === 2 || coin.transaction.txType === 3,
      pockettx: coin.transaction.txType > 3,
      confirmations: tip - height,
      height,
    }
  })
}
