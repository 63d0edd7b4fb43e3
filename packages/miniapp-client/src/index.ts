/**
 * bastyon-miniapp-client: the browser side of a Bastyon mini-app on bastyon-miniapp-backend.
 * No dependencies; an ES module for the browser (and Node 20, for tests).
 */
export type { CatalogItem, Challenge, CheckedTransaction, Entitlement, Invoice, NotificationChannel, PolledEvents, Session, StorageListing, StoredItem, StreamTicket } from './api-types.js'
export { createClient, type ClientOptions, type MiniAppClient, type PayOptions, type SessionStore } from './client.js'
export { demoHost, satoshiOfPkoin, type DemoHostOptions } from './demo-host.js'
export { MiniAppError } from './errors.js'
export type { EventSourceConstructor, EventSourceLike, FollowOptions, Following, MiniAppEvent, Transport } from './events.js'
export { connectHost, txidOf, type Host, type HostPaymentRequest } from './host.js'
export type { BastyonChannel, Notifications, OptInOptions } from './notifications.js'
export type { RequestOptions } from './request.js'
export type { PutOptions, Storage, StorageArea, StoredValue, UpdateOptions } from './storage.js'
