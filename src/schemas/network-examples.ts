/**
 * The OpenAPI document speaks of the service's own network: its address rule and example
 * addresses are mainnet's in the route schemas (static, shared by every app), and are swapped
 * for POCKETNET_NETWORK's when the document is built, so that "Try it out" works on a testnet
 * or regtest service too.
 */
import { addressRule, POCKETNET_ADDRESS_RULE, type PocketnetNetwork } from 'pocketnet-client'

/** A well-formed address of each network, for examples. */
export const EXAMPLE_ADDRESSES: Readonly<Record<PocketnetNetwork, readonly string[]>> = {
  main: ['P8bbRWJknHBXJRBTDSS88uQJSFvX67iN88', 'PTXSe2Gyg9XogaRZCDgDgJ65AZcD1tidUX', 'PDXnfk67tvSSRQ4exMLqrx6Ujh2aihJFcM'],
  test: ['TGSzZGCTaYjjmMZontBcdi3M9EToS5ztEp', 'TGSzZGCTaYjjmMZontBcdi3M9EToS5ztEp', 'TGSzZGCTaYjjmMZontBcdi3M9EToS5ztEp'],
  regtest: ['micwoYEUVptxfhCnvaKmbbEDdTcEUEVeo4', 'mz3ZDGjU4bwpa8tcvKYsv1nMpHEBkGmXWw', 'mwf7UrRsH9Sb3o69xpsVSQ8NCsHvgeziby'],
}

/** `document` (the OpenAPI object) with mainnet's address rule and examples replaced by `network`'s. */
export function forNetwork<T> (document: T, network: PocketnetNetwork): T {
  if (network === 'main') return document
  // As the rules appear inside the JSON text: their quotes escaped.
  const inJson = (text: string): string => JSON.stringify(text).slice(1, -1)
  let text = JSON.stringify(document).replaceAll(inJson(POCKETNET_ADDRESS_RULE), inJson(addressRule(network)))
  EXAMPLE_ADDRESSES.main.forEach((address, index) => {
    text = text.replaceAll(address, EXAMPLE_ADDRESSES[network][index] as string)
  })
  return JSON.parse(text) as T
}
