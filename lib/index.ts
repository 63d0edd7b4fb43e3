/** The Pocketnet RPC client: everything a caller may use. Usable without the HTTP service. */
export { PocketNetProxyApi, type PocketNetRpc, type CallOptions } from './client.js'
export { getPocketNetProxyInstance, closePocketNetProxyInstance, createSharedInstance, type SharedInstance } from './shared-instance.js'
export { DEFAULT_NODES, parseNodeList, type ClientOptions } from './options.js'
export type { CacheOutcome } from './cache.js'
export { isPocketnetAddress, POCKETNET_ADDRESS_RULE } from './address.js'
export type { NodeSnapshot, AttemptEvent, AttemptOutcome } from './node-pool.js'
export type { CircuitState } from './node-health.js'
export type { NodeInfo } from './methods/getnodeinfo.js'
export type { GetUserProfileParams, UserProfile, ProfileForm } from './methods/getuserprofile.js'
export type { SearchParams, SearchType, SearchResult, ContentPage, ContentItem, RawSearchResult } from './methods/search.js'
export {
  RPC_ERROR_CODES,
  RpcClientError,
  RpcInvalidParamsError,
  RpcNodeError,
  RpcTransportError,
  RpcTimeoutError,
  RpcUnavailableError,
  RpcClosedError,
  isRpcClientError,
  type RpcErrorCode,
} from './errors.js'
