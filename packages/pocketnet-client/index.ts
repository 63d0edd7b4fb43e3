/** The Pocketnet RPC client: everything a caller may use. Usable without the HTTP service. */
export { PocketNetProxyApi, type PocketNetRpc, type CallOptions } from './client.js'
export { getPocketNetProxyInstance, closePocketNetProxyInstance, createSharedInstance, type SharedInstance } from './shared-instance.js'
export {
  DEFAULT_NODES,
  OPTION_RANGES,
  CACHE_RANGES,
  CLIENT_ENV,
  clientOptionsFromEnv,
  parseNodeList,
  type ClientOptions,
  type OptionRange,
} from './options.js'
export { DEFAULT_CACHE_TTL_MS, type CacheOutcome } from './cache.js'
export { isPocketnetAddress, addressRule, addressBytes, addressFromBytes, POCKETNET_ADDRESS_RULE, POCKETNET_NETWORKS, type PocketnetNetwork } from './address.js'
export {
  verifySignature,
  hostHex,
  SignatureError,
  SIGNATURE_ERROR_CODES,
  type SignatureErrorCode,
  type VerifyOptions,
  type VerifiedSignature,
} from './auth/verify-signature.js'
export { RedisLink, parseRedisUrl, type RedisLinkOptions, type RedisOperationEvent, type RedisOutcome, type RedisScript } from './redis/redis-link.js'
export type { SharedOutcome } from './redis/shared-answers.js'
export type { BlockPosition, ChainEvent, BlockEvent, ReorgEvent, TransactionEvent, NotificationEvent } from './events/chain-event.js'
export { REAL_TIMERS, type Timers, type TimerHandle } from './timers.js'
export { backoffDelayMs, type BackoffOptions, type BackoffJitter } from './backoff.js'
export { CoalescingRun, type CoalescingRunOptions } from './coalescing-run.js'
export type { NodeSnapshot, NodeTipReport, AttemptEvent, AttemptOutcome, OverloadEvent } from './node-pool.js'
export type { OverloadReason } from './node-slots.js'
export type { CircuitState } from './node-health.js'
export type * from './methods/table-rpc.js'
export { RPC_TABLE, type TableMethodName } from './methods/table.js'
export type { TableMethod, TableParam, TableWire, TableShape } from './methods/table-spec.js'
export type { NodeInfo } from './methods/getnodeinfo.js'
export type { GetUserProfileParams, UserProfile, ProfileForm } from './methods/getuserprofile.js'
export { DEFAULT_PAGE_SIZE, type SearchParams, type SearchType, type SearchResult, type ContentPage, type ContentItem, type RawSearchResult } from './methods/search.js'
export {
  RPC_ERROR_CODES,
  RpcClientError,
  RpcInvalidParamsError,
  RpcNodeError,
  RpcTransportError,
  RpcTimeoutError,
  RpcUnavailableError,
  RpcOverloadedError,
  RpcClosedError,
  isRpcClientError,
  type RpcErrorCode,
} from './errors.js'
export { createNodeEventSource, type NodeEventSource, type NodeEventSourceStats } from './events/node-event-source.js'
export type { SocketState } from './events/socket-keeper.js'
export type { ReorgCause } from './events/chain-sync.js'
export { EVENT_SOURCE_RANGES, DEFAULT_WATCH_ADDRESS, type NodeEventSourceOptions, type EventSourceClient } from './events/source-options.js'
export { NodeEventError, EVENT_ERROR_CODES, type EventErrorCode } from './events/errors.js'
export { SATOSHI_PER_PKOIN, MAX_FLOAT_PKOIN, pkoinToSatoshi, satoshiFromString, formatPkoin, satoshiToPkoinNumber, isSatoshi } from './payments/satoshi.js'
export { MAX_MEMO_BYTES, readOpReturnPushes, memoOfScript, memoScriptHex, memoByteLength } from './payments/op-return.js'
export { readChainTransaction, isUnknownTransactionError, type ChainTransaction, type ChainInput, type ChainOutput } from './payments/chain-transaction.js'
export { proveInvoicePayment, type PaymentExpectation, type PaymentProof, type PaymentOutcome } from './payments/prove-payment.js'
export { buildHostCheckout, hostPaymentHash, adler32, type HostCheckout, type HostCheckoutRequest, type HostPayment, type CheckoutItem } from './payments/host-checkout.js'
export { CodedError } from './coded-error.js'
export { PaymentError, PAYMENT_ERROR_CODES, type PaymentErrorCode } from './payments/errors.js'
export { signWebhook, verifyWebhookSignature, WebhookSignatureError, WEBHOOK_SIGNATURE_ERROR_CODES, WEBHOOK_SIGNATURE_HEADER, DEFAULT_WEBHOOK_TOLERANCE_S, type WebhookSignatureErrorCode, type VerifyWebhookOptions } from './payments/webhook-signature.js'
export { walletKeyFromWif, keyOfSecret, hash160, WIF_VERSION, type WalletKey } from './wallet/wallet-key.js'
export { encodeTransaction, encodeTransactionHex, decodeTransaction, transactionId, FINAL_SEQUENCE, type Transaction, type TransactionInput, type TransactionOutput } from './wallet/transaction.js'
export { p2pkhScript, addressOfScript, memoScript } from './wallet/scripts.js'
export { signatureHash, signP2pkhInputs, SIGHASH_ALL } from './wallet/sign.js'
export { coinsOfUnspent, type Coin } from './wallet/coin.js'
export { spendableCoins, COINBASE_MATURITY, POCKET_TX_MATURITY } from './wallet/coin-selection.js'
export { feeRateOf, MIN_RELAY_FEE_SAT_PER_KB } from './wallet/fee-rate.js'
export { signedSizeBound, feeFor } from './wallet/transaction-size.js'
export {
  buildPayment,
  DUST_THRESHOLD_SAT,
  MAX_PAYMENT_OUTPUTS,
  MAX_PAYMENT_INPUTS,
  MAX_FEE_RATE_SAT_PER_KB,
  TRANSACTION_VERSION,
  type PaymentOutput,
  type PaymentRequest,
  type BuiltPayment,
} from './wallet/build-payment.js'
export { WalletError, WALLET_ERROR_CODES, type WalletErrorCode } from './wallet/errors.js'
export { BroadcastError, BROADCAST_ERROR_CODES, type BroadcastErrorCode, type BroadcastResult } from './wallet/broadcast.js'
