/**
 * The service's configuration: one TypeBox schema for the environment, its type, and
 * loadConfig(env), which fails fast with one line per bad variable.
 */
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'
import { isNotificationHeader, isNotificationPath, parseProxyList } from './notifications/notification-rules.js'
import { parseWindow } from './rate-limit/window.js'
import { CACHE_RANGES, DEFAULT_CACHE_TTL_MS, DEFAULT_NODES, OPTION_RANGES, POCKETNET_NETWORKS, isPocketnetAddress, parseNodeList, parseRedisUrl, type OptionRange, type PocketnetNetwork } from 'pocketnet-client'

const POCKETNET_NODES_RULE = 'a comma-separated list of http(s) node URLs such as http://127.0.0.1:38081'
const REDIS_URL_RULE = 'empty (no Redis), or redis://[user:password@]host[:port][/db] (rediss:// for TLS)'
const METRICS_TOKEN_RULE = 'empty (GET /metrics open to anyone who reaches the port, rate limited), or a secret of at least 16 visible ASCII characters, no spaces, that scrapers send as Authorization: Bearer <token>'
const PAYMENT_WEBHOOK_URL_RULE = 'empty (no webhooks), or the http(s):// URL that receives the payment and entitlement events (needs PAYMENT_ADDRESS and PAYMENT_WEBHOOK_SECRET)'
const PAYMENT_WEBHOOK_SECRET_RULE = 'a secret of at least 32 visible ASCII characters, no spaces, that signs each webhook (HMAC-SHA256); required with PAYMENT_WEBHOOK_URL'
const EVENTS_INGEST_LEASE_RULE = '0 (no lease: with REDIS_URL every instance ingests the chain itself) or an integer from 1000 to 600000 (milliseconds the ingest lease outlives its holder; renewed every third of it)'
const APP_ADMINS_RULE = 'empty (no admins), or a comma-separated list of addresses of POCKETNET_NETWORK that may write the app\'s collections through the API'
const NOTIFY_BASTYON_PROXIES_RULE = 'a comma-separated list of origins (https://host[:port], or http:// on a loopback host for tests) of the Bastyon proxies a user may name when opting in to notifications'
const TELEGRAM_BOT_TOKEN_RULE = 'empty (Telegram off), or the bot\'s token from BotFather: digits, a colon and 20 or more of A-Z a-z 0-9 _ - (needs notifications on)'
const TELEGRAM_BOT_USERNAME_RULE = 'the bot\'s username, 5 to 32 of A-Z a-z 0-9 _ ending in "bot" (what the deep links https://t.me/<username>?start=… open); required with TELEGRAM_BOT_TOKEN'
const TELEGRAM_API_URL_RULE = 'the Telegram Bot API\'s base URL, http(s) without a query: https://api.telegram.org, a local Bot API server, or the emulator in tests and the demo'
const TELEGRAM_WEBHOOK_URL_RULE = 'empty (the operator sets the webhook), or the public URL of POST /api/telegram/webhook, which the service gives Telegram with setWebhook at start (Telegram takes https:// only, on port 443, 80, 88 or 8443)'
const TELEGRAM_WEBHOOK_SECRET_RULE = 'empty (made from TELEGRAM_BOT_TOKEN, the same on every instance), or 1 to 256 of A-Z a-z 0-9 _ -: what Telegram sends as X-Telegram-Bot-Api-Secret-Token with each update'
const NOTICE_HEADER_RULE = 'a notification\'s header: 1 to 100 characters, no control characters'
const NOTICE_PATH_RULE = 'where a notification opens the app: a path starting with one /, printable ASCII without spaces or backslashes, at most 200 characters'
const ADMIN_TOKEN_RULE = 'empty (no admin routes), or a secret of at least 32 visible ASCII characters, no spaces, that operators send as Authorization: Bearer <token>'
/** The public Bastyon proxies, as pocketnet.gui's own configuration lists them. */
const BASTYON_PROXIES = [1, 2, 3, 4, 5, 6].map(n => `https://${n}.pocketnet.app:8899`).join(',')
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** A whole number within `range` (pocketnet-client's, for the client's options: one source for both). */
function integer (range: OptionRange, unit = '') {
  return Type.Integer({ minimum: range.min, maximum: range.max, default: range.default, description: `an integer from ${range.min} to ${range.max}${unit}` })
}

/** A cache time to live for `method`, with pocketnet-client's default for it. */
function cacheTtl (method: string) {
  const { min, max } = CACHE_RANGES.ttlMs
  return Type.Integer({ minimum: min, maximum: max, default: DEFAULT_CACHE_TTL_MS[method], description: `a whole number of milliseconds up to ${max} (0 turns the cache off)` })
}

const MS = ' (milliseconds)'

export const ConfigSchema = Type.Object({
  PORT: integer({ default: 3000, min: 0, max: 65535 }),
  HOST: Type.String({ minLength: 1, default: '0.0.0.0', description: 'a host name or IP address to listen on' }),
  POCKETNET_NODES: Type.String({ default: DEFAULT_NODES.join(','), description: POCKETNET_NODES_RULE }),
  RPC_DEADLINE_MS: integer(OPTION_RANGES.deadlineMs, MS),
  RPC_TIMEOUT_MS: integer(OPTION_RANGES.attemptTimeoutMs, MS),
  POCKETNET_PROBE_INTERVAL_MS: integer(OPTION_RANGES.probeIntervalMs, MS),
  POCKETNET_CONNECTIONS_PER_NODE: integer(OPTION_RANGES.connectionsPerNode),
  POCKETNET_NODE_THREADS: integer(OPTION_RANGES.nodeThreads),
  POCKETNET_MAX_LAG_BLOCKS: integer(OPTION_RANGES.maxLagBlocks),
  CACHE_TTL_NODEINFO_MS: cacheTtl('getnodeinfo'),
  CACHE_TTL_PROFILE_MS: cacheTtl('getuserprofile'),
  CACHE_TTL_SEARCH_MS: cacheTtl('search'),
  CACHE_MAX_ENTRIES: integer(CACHE_RANGES.maxEntries),
  CACHE_MAX_BYTES: integer(CACHE_RANGES.maxBytes, ' (bytes)'),
  CACHE_SERVE_STALE: Type.Boolean({ default: true, description: 'true or false' }),
  CORS_ORIGINS: Type.String({ default: '', description: 'a comma-separated list of origins such as https://app.example, or * for any (empty: no cross-origin calls)' }),
  RATE_LIMIT_MAX: integer({ default: 300, min: 1, max: 1_000_000_000 }),
  RATE_LIMIT_WINDOW: Type.String({ minLength: 1, default: '1 minute', description: 'milliseconds, or a duration such as "1 minute" or "30 seconds"' }),
  RATE_LIMIT_HOLD_MS: integer({ default: 1000, min: 0, max: 60_000 }, ' (milliseconds a 429 is held once a client has been refused 10 times in its window; 0 holds none)'),
  TRUST_PROXY: Type.String({ default: '', description: 'empty (trust no proxy), true, or a comma-separated list of proxy IPs or CIDRs whose X-Forwarded-For is believed' }),
  SHUTDOWN_TIMEOUT_MS: integer({ default: 10_000, min: 0, max: 600_000 }, MS),
  WEB_CONCURRENCY: integer({ default: 1, min: 1, max: 256 }, ' (worker processes on one port)'),
  REDIS_URL: Type.String({ default: '', description: REDIS_URL_RULE }),
  REDIS_TIMEOUT_MS: integer({ default: 100, min: 1, max: 10_000 }, MS),
  MAX_URL_LENGTH: integer({ default: 2048, min: 64, max: 65_536 }),
  MAX_HEADER_BYTES: integer({ default: 16_384, min: 1024, max: 1_048_576 }, ' (bytes)'),
  REQUEST_TIMEOUT_MS: integer({ default: 30_000, min: 100, max: 600_000 }, MS),
  MAX_BODY_BYTES: integer({ default: 16_384, min: 1024, max: 1_048_576 }, ' (bytes; a route may take less)'),
  MAX_EVENT_LOOP_DELAY_MS: integer({ default: 1000, min: 0, max: 60_000 }, ' (milliseconds; 0 turns the check off)'),
  MAX_CONNECTIONS: integer({ default: 0, min: 0, max: 10_000_000 }, ' (open connections the server holds; 0 derives it from the open-file limit, ulimit -n)'),
  BASTYON_APP_ID: Type.String({ default: '', pattern: '^([a-z0-9.]{1,128})?$', description: "empty (sign-in off), or the mini-app's manifest id as the host uses it: lowercase letters, digits and dots, such as demo.pocketnet.app" }),
  POCKETNET_NETWORK: Type.Unsafe<PocketnetNetwork>({ type: 'string', enum: [...POCKETNET_NETWORKS], default: 'main', description: 'main, test or regtest: the network of the nodes, whose addresses the API and sign-in accept' }),
  AUTH_CHALLENGE_TTL_S: integer({ default: 300, min: 10, max: 3600 }, ' (seconds)'),
  AUTH_SESSION_TTL_S: integer({ default: 86_400, min: 60, max: 31_536_000 }, ' (seconds)'),
  AUTH_MAX_CHALLENGES: integer({ default: 100_000, min: 1, max: 100_000_000 }),
  AUTH_MAX_SESSIONS: integer({ default: 100_000, min: 1, max: 100_000_000 }),
  AUTH_RATE_LIMIT_MAX: integer({ default: 30, min: 1, max: 1_000_000 }, ' (sign-in requests per RATE_LIMIT_WINDOW and client, both steps together)'),
  AUTH_SIGNATURE_CHECKS_PER_S: integer({ default: 200, min: 1, max: 1_000_000 }, ' (signatures checked per second by one process; past it sign-in answers 503)'),
  AUTH_ACCEPT_SIGNATURE_HEADER: Type.Boolean({ default: false, description: 'true or false (needs BASTYON_APP_ID)' }),
  AUTH_ACCEPT_SIGNED_FETCH: Type.Boolean({ default: false, description: 'true or false (needs BASTYON_APP_ID)' }),
  STORAGE: Type.Boolean({ default: true, description: 'true or false: per-user storage and the app\'s collections, whenever sign-in is on (BASTYON_APP_ID)' }),
  STORAGE_MAX_KEYS: integer({ default: 1024, min: 1, max: 1_000_000 }, ' (keys one user, or one collection, may keep)'),
  STORAGE_MAX_VALUE_BYTES: integer({ default: 65_536, min: 16, max: 1_048_576 }, ' (bytes of one value as JSON)'),
  STORAGE_MAX_USER_BYTES: integer({ default: 1_048_576, min: 16, max: 1_073_741_824 }, ' (bytes of all keys and values of one user, or one collection)'),
  APP_ADMINS: Type.String({ default: '', description: APP_ADMINS_RULE }),
  NOTIFICATIONS: Type.Boolean({ default: true, description: 'true or false: notifications through the users\' Bastyon proxies (opt-in routes and app.notifications), whenever sign-in is on (BASTYON_APP_ID); they keep their state in the database' }),
  NOTIFY_BASTYON_PROXIES: Type.String({ default: BASTYON_PROXIES, description: NOTIFY_BASTYON_PROXIES_RULE }),
  NOTIFY_USER_INTERVAL_S: integer({ default: 30, min: 0, max: 86_400 }, ' (seconds between two notifications to one user; 0: no interval)'),
  NOTIFY_USER_DAILY_LIMIT: integer({ default: 100, min: 1, max: 100_000 }, ' (notifications to one user in any 24 hours)'),
  NOTIFY_APP_DAILY_LIMIT: integer({ default: 100_000, min: 1, max: 1_000_000_000 }, ' (notifications the app sends in a UTC day, all users together)'),
  NOTIFY_BASTYON_TIMEOUT_MS: integer({ default: 10_000, min: 100, max: 120_000 }, ' (milliseconds one push to a proxy may take; a push in hand when the process dies is retried this plus 5 s later)'),
  NOTIFY_RETENTION_S: integer({ default: 2_592_000, min: 3600, max: 315_360_000 }, ' (seconds a delivered or given-up notification delivery is kept, as a record of what was sent, before it is deleted; pending ones are kept until settled)'),
  TELEGRAM_BOT_TOKEN: Type.String({ default: '', description: TELEGRAM_BOT_TOKEN_RULE }),
  TELEGRAM_BOT_USERNAME: Type.String({ default: '', description: TELEGRAM_BOT_USERNAME_RULE }),
  TELEGRAM_API_URL: Type.String({ default: 'https://api.telegram.org', description: TELEGRAM_API_URL_RULE }),
  TELEGRAM_WEBHOOK_URL: Type.String({ default: '', description: TELEGRAM_WEBHOOK_URL_RULE }),
  TELEGRAM_WEBHOOK_SECRET: Type.String({ default: '', description: TELEGRAM_WEBHOOK_SECRET_RULE }),
  ADMIN_TOKEN: Type.String({ default: '', description: ADMIN_TOKEN_RULE }),
  METRICS_TOKEN: Type.String({ default: '', description: METRICS_TOKEN_RULE }),
  DATA_DIR: Type.String({ default: 'data', minLength: 1, description: 'the directory of the embedded database (invoices), when DATABASE_URL is empty' }),
  DATABASE_URL: Type.String({ default: '', description: 'empty (the embedded database in DATA_DIR), or postgres://user:password@host:port/db, shared by every instance' }),
  PAYMENT_ADDRESS: Type.String({ default: '', description: 'empty (payments off), or the app\'s receiving address, of POCKETNET_NETWORK' }),
  PAYMENT_CONFIRMATIONS: integer({ default: 6, min: 1, max: 1000 }, ' (blocks before an invoice is confirmed)'),
  PAYMENT_CONFIRM_NODES: integer({ default: 2, min: 1, max: 100 }, ' (nodes that must agree on a payment before its invoice is confirmed; at most the nodes in POCKETNET_NODES)'),
  PAYMENT_INVOICE_TTL_S: integer({ default: 3600, min: 60, max: 31_536_000 }, ' (seconds an invoice can be paid in)'),
  PAYMENT_TIPS: Type.Boolean({ default: false, description: 'true or false: POST /api/payments/tips (needs PAYMENT_ADDRESS)' }),
  PAYMENT_TIP_MIN_SAT: integer({ default: 100_000, min: 1, max: 3_355_443_199_999_999 }, ' (smallest tip, in satoshi)'),
  PAYMENT_TIP_MAX_SAT: integer({ default: 10_000_000_000, min: 1, max: 3_355_443_199_999_999 }, ' (largest tip, in satoshi)'),
  PAYMENT_WEBHOOK_URL: Type.String({ default: '', description: PAYMENT_WEBHOOK_URL_RULE }),
  PAYMENT_WEBHOOK_SECRET: Type.String({ default: '', description: PAYMENT_WEBHOOK_SECRET_RULE }),
  PAYMENT_WEBHOOK_TIMEOUT_MS: integer({ default: 10_000, min: 100, max: 120_000 }, ' (milliseconds one webhook attempt may take)'),
  PAYMENT_RETENTION_S: integer({ default: 2_592_000, min: 3600, max: 315_360_000 }, ' (seconds an invoice that expired unpaid is kept before it is deleted with its events)'),
  PAYMENT_TIP_RATE_LIMIT_MAX: integer({ default: 10, min: 1, max: 1_000_000 }, ' (tips one client may create per minute; past it 429)'),
  PAYMENT_TIPS_MAX_OPEN: integer({ default: 10_000, min: 1, max: 100_000_000 }, ' (invoices open to payment at once past which tips answer 503)'),
  PAYMENT_TIP_EXPIRY_WEBHOOKS: Type.Boolean({ default: false, description: 'true or false: a tip that expires unpaid is told to the webhook too' }),
  PAYOUT_KEY_FILE: Type.String({ default: '', description: 'empty (payouts off), or the path of a file holding the app\'s hot wallet key (WIF, of POCKETNET_NETWORK), readable by its owner only' }),
  PAYOUT_CONFIRMATIONS: integer({ default: 6, min: 1, max: 1000 }, ' (blocks on a payout\'s transaction before it is confirmed; also how long another spend of its outputs must stand before it fails)'),
  PAYOUT_MAX_SAT: integer({ default: 10_000_000_000, min: 0, max: 3_355_443_199_999_999 }, ' (the most one payout or refund may send, in satoshi; 0: no limit)'),
  PAYOUT_DAILY_MAX_SAT: integer({ default: 100_000_000_000, min: 0, max: 3_355_443_199_999_999 }, ' (the most the payouts and refunds of a UTC day may send together, in satoshi; 0: no limit)'),
  PAYOUT_ALLOWLIST: Type.String({ default: '', description: 'empty (any receiver), or the comma-separated addresses payouts may go to (refunds go to the payer, whatever this says)' }),
  PAYOUT_FEE_FLOOR_SAT_PER_KB: integer({ default: 10_000, min: 1000, max: 100_000_000 }, ' (the least fee rate of a payout, in satoshi per 1000 bytes, when the node estimates less or nothing)'),
  PAYOUT_CHECK_INTERVAL_S: integer({ default: 30, min: 1, max: 3600 }, ' (seconds between checks of open payouts without a block)'),
  ENTITLEMENTS_CACHE_TTL_MS: integer({ default: 5000, min: 0, max: 3_600_000 }, ' (milliseconds what a user holds is kept in process at most: how stale another instance\'s grant or revocation can be seen when its message is lost, or without REDIS_URL; 0 reads the database on every check)'),
  ENTITLEMENTS_CACHE_MAX_USERS: integer({ default: 100_000, min: 1, max: 100_000_000 }, ' (users whose entitlements one process keeps at once, the least recently checked dropped first)'),
  CATALOG_FILE: Type.String({ default: '', description: 'empty (no catalogue), or the path of a JSON file {"items": [{"sku", "title", "priceSat", "durationS"?}]} of what the app sells (needs PAYMENT_ADDRESS and BASTYON_APP_ID)' }),
  NOTIFY_ON_INVOICE_CONFIRMED: Type.Boolean({ default: false, description: 'true or false: tell an invoice\'s payer (whom it grants to, or its metadata\'s payer) that it was confirmed, when they opted in to notifications' }),
  NOTIFY_INVOICE_CONFIRMED_HEADER: Type.String({ default: 'Your payment is confirmed', description: NOTICE_HEADER_RULE }),
  NOTIFY_INVOICE_CONFIRMED_PATH: Type.String({ default: '/', description: NOTICE_PATH_RULE }),
  NOTIFY_ON_ENTITLEMENT_GRANTED: Type.Boolean({ default: false, description: 'true or false: tell a user who opted in to notifications that they were granted an entitlement (a purchase or server code\'s grant)' }),
  NOTIFY_ENTITLEMENT_GRANTED_HEADER: Type.String({ default: 'Your purchase is ready', description: NOTICE_HEADER_RULE }),
  NOTIFY_ENTITLEMENT_GRANTED_PATH: Type.String({ default: '/', description: NOTICE_PATH_RULE }),
  NOTIFY_BEFORE_EXPIRY_S: integer({ default: 0, min: 0, max: 31_536_000 }, ' (seconds before a time-limited entitlement ends that its holder is told, once per end; 0: never)'),
  NOTIFY_EXPIRY_HEADER: Type.String({ default: 'Your access ends soon', description: NOTICE_HEADER_RULE }),
  NOTIFY_EXPIRY_PATH: Type.String({ default: '/', description: NOTICE_PATH_RULE }),
  EVENTS_INGEST: Type.Boolean({ default: true, description: 'true or false: ingest the chain for the event stream (one node WebSocket per process; with REDIS_URL, one for all instances)' }),
  EVENTS_INGEST_LEASE_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000, description: EVENTS_INGEST_LEASE_RULE }),
  EVENTS_RETAIN: integer({ default: 1000, min: 0, max: 1_000_000 }, ' (events kept for replay)'),
  EVENTS_RETAIN_S: integer({ default: 3600, min: 0, max: 86_400 }, ' (seconds an event is kept for replay)'),
  EVENTS_HEARTBEAT_MS: integer({ default: 15_000, min: 1000, max: 300_000 }, ' (milliseconds between keep-alive comments on a stream)'),
  EVENTS_MAX_STREAMS: integer({ default: 10_000, min: 1, max: 1_000_000 }, ' (open streams per process; past it 503)'),
  EVENTS_MAX_STREAMS_PER_CLIENT: integer({ default: 10, min: 1, max: 1_000_000 }, ' (open streams per client, an IPv6 one by its /48; past it 503)'),
  EVENTS_MAX_BUFFER_BYTES: integer({ default: 65_536, min: 1024, max: 16_777_216 }, ' (bytes a stream may leave unread; past it the client is dropped)'),
  EVENTS_MAX_STALL_MS: integer({ default: 30_000, min: 1000, max: 600_000 }, ' (milliseconds a stream\'s client may go without reading what it was sent; past it the client is dropped)'),
  EVENTS_MAX_POLLS: integer({ default: 10_000, min: 1, max: 1_000_000 }, ' (long-polls waiting at once per process; past it 503)'),
  EVENTS_MAX_POLLS_PER_CLIENT: integer({ default: 10, min: 1, max: 1_000_000 }, ' (long-polls waiting at once per client, an IPv6 one by its /48; past it 429)'),
  EVENTS_POLL_WAIT_MS: integer({ default: 25_000, min: 0, max: 120_000 }, ' (how long a long-poll waits for an event)'),
  EVENTS_TICKET_TTL_S: integer({ default: 60, min: 5, max: 3600 }, ' (seconds a stream ticket can be used in)'),
  NODE_ENV: Type.String({ default: 'production', description: 'development, production or test' }),
  LOG_LEVEL: Type.Unsafe<typeof LOG_LEVELS[number]>({ type: 'string', enum: [...LOG_LEVELS], default: 'info', description: `one of ${LOG_LEVELS.join(', ')}` }),
})

export type AppConfig = Static<typeof ConfigSchema>

declare module 'fastify' {
  interface FastifyInstance {
    /** The validated configuration, for the plugins that read it (named so that it never meets the `config` of @fastify/env in a developer's app). */
    miniAppConfig: AppConfig
  }
}

export class ConfigError extends Error {
  constructor (readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map(problem => `- ${problem}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

/** Reads and validates the configuration from `env` (variables not in the schema are ignored). */
export function loadConfig (env: Record<string, string | undefined>): AppConfig {
  const raw: Record<string, unknown> = {}
  for (const name of Object.keys(ConfigSchema.properties)) {
    const value = env[name]
    if (value !== undefined && value !== '') raw[name] = value
  }
  const config = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, { ...raw })) as Record<string, unknown>
  const problems = new Map<string, string>()
  for (const error of Value.Errors(ConfigSchema, config)) {
    const name = error.instancePath.slice(1)
    const rule = (ConfigSchema.properties as Record<string, { description?: string }>)[name]?.description ?? error.message
    if (!problems.has(name)) problems.set(name, `${name} must be ${rule} (got ${JSON.stringify(raw[name])})`)
  }
  if (typeof config.POCKETNET_NODES === 'string') {
    const nodes = parseNodeList(config.POCKETNET_NODES)
    const bad = nodes.find(node => !/^https?:\/\/[^/\s]+/.test(node))
    if (nodes.length === 0 || bad !== undefined) {
      problems.set('POCKETNET_NODES', `POCKETNET_NODES must be ${POCKETNET_NODES_RULE} (got ${JSON.stringify(bad ?? config.POCKETNET_NODES)})`)
    }
  }
  if (typeof config.RATE_LIMIT_WINDOW === 'string' && !isWindow(config.RATE_LIMIT_WINDOW)) {
    problems.set('RATE_LIMIT_WINDOW', `RATE_LIMIT_WINDOW must be milliseconds, or a duration such as "1 minute" or "30 seconds" (got ${JSON.stringify(config.RATE_LIMIT_WINDOW)})`)
  }
  if (typeof config.REDIS_URL === 'string' && config.REDIS_URL !== '' && !isRedisUrl(config.REDIS_URL)) {
    // The value may hold a password: the message names the variable and the rule only.
    problems.set('REDIS_URL', `REDIS_URL must be ${REDIS_URL_RULE}`)
  }
  if (typeof config.EVENTS_INGEST_LEASE_MS === 'number' && config.EVENTS_INGEST_LEASE_MS > 0 && config.EVENTS_INGEST_LEASE_MS < 1000) {
    problems.set('EVENTS_INGEST_LEASE_MS', `EVENTS_INGEST_LEASE_MS must be ${EVENTS_INGEST_LEASE_RULE} (got ${config.EVENTS_INGEST_LEASE_MS})`)
  }
  if (typeof config.METRICS_TOKEN === 'string' && config.METRICS_TOKEN !== '' && !/^[\x21-\x7e]{16,}$/.test(config.METRICS_TOKEN)) {
    // A secret: the message names the variable and the rule only.
    problems.set('METRICS_TOKEN', `METRICS_TOKEN must be ${METRICS_TOKEN_RULE}`)
  }
  if (config.AUTH_ACCEPT_SIGNATURE_HEADER === true && config.BASTYON_APP_ID === '') {
    problems.set('AUTH_ACCEPT_SIGNATURE_HEADER', 'AUTH_ACCEPT_SIGNATURE_HEADER needs BASTYON_APP_ID: a Signature header is checked against the mini-app\'s id')
  }
  if (config.AUTH_ACCEPT_SIGNED_FETCH === true && config.BASTYON_APP_ID === '') {
    problems.set('AUTH_ACCEPT_SIGNED_FETCH', 'AUTH_ACCEPT_SIGNED_FETCH needs BASTYON_APP_ID: a signed fetch is checked against the mini-app\'s id')
  }
  if (config.BASTYON_APP_ID !== '' && typeof config.WEB_CONCURRENCY === 'number' && config.WEB_CONCURRENCY > 1 && config.REDIS_URL === '') {
    // Each worker would keep its own sessions: a sign-out on one would not hold on the others.
    problems.set('WEB_CONCURRENCY', 'WEB_CONCURRENCY above 1 with sign-in on (BASTYON_APP_ID) needs REDIS_URL: without it each worker keeps its own sessions, so a sign-out or a used signature on one worker would still be accepted by another')
  }
  if (typeof config.PAYMENT_ADDRESS === 'string' && config.PAYMENT_ADDRESS !== '' && !isPocketnetAddress(config.PAYMENT_ADDRESS, config.POCKETNET_NETWORK as PocketnetNetwork)) {
    problems.set('PAYMENT_ADDRESS', `PAYMENT_ADDRESS must be empty or an address of the ${String(config.POCKETNET_NETWORK)} network (got ${JSON.stringify(config.PAYMENT_ADDRESS)})`)
  }
  if (config.PAYMENT_TIPS === true && config.PAYMENT_ADDRESS === '') problems.set('PAYMENT_TIPS', 'PAYMENT_TIPS needs PAYMENT_ADDRESS: tips are paid to it')
  if (typeof config.PAYMENT_TIP_MIN_SAT === 'number' && typeof config.PAYMENT_TIP_MAX_SAT === 'number' && config.PAYMENT_TIP_MIN_SAT > config.PAYMENT_TIP_MAX_SAT) {
    problems.set('PAYMENT_TIP_MIN_SAT', 'PAYMENT_TIP_MIN_SAT must not be above PAYMENT_TIP_MAX_SAT')
  }
  if (typeof config.PAYMENT_WEBHOOK_URL === 'string' && config.PAYMENT_WEBHOOK_URL !== '') {
    // The URL may hold credentials or a token, and the secret is one: messages name the rule only.
    if (!isHttpUrl(config.PAYMENT_WEBHOOK_URL)) problems.set('PAYMENT_WEBHOOK_URL', `PAYMENT_WEBHOOK_URL must be ${PAYMENT_WEBHOOK_URL_RULE}`)
    else if (config.PAYMENT_ADDRESS === '') problems.set('PAYMENT_WEBHOOK_URL', 'PAYMENT_WEBHOOK_URL needs PAYMENT_ADDRESS: webhooks tell of payments, which are off without it')
    if (typeof config.PAYMENT_WEBHOOK_SECRET !== 'string' || !/^[\x21-\x7e]{32,}$/.test(config.PAYMENT_WEBHOOK_SECRET)) {
      problems.set('PAYMENT_WEBHOOK_SECRET', `PAYMENT_WEBHOOK_SECRET must be ${PAYMENT_WEBHOOK_SECRET_RULE}`)
    }
  }
  if (typeof config.CATALOG_FILE === 'string' && config.CATALOG_FILE !== '') {
    if (config.PAYMENT_ADDRESS === '') problems.set('CATALOG_FILE', 'CATALOG_FILE needs PAYMENT_ADDRESS: the catalogue\'s items are bought with invoices paid to it')
    else if (config.BASTYON_APP_ID === '') problems.set('CATALOG_FILE', 'CATALOG_FILE needs BASTYON_APP_ID: an item is granted to the signed-in user who buys it')
  }
  const storageOn = config.BASTYON_APP_ID !== '' && config.STORAGE === true
  const notificationsOn = config.BASTYON_APP_ID !== '' && config.NOTIFICATIONS === true
  if (typeof config.NOTIFY_BASTYON_PROXIES === 'string') {
    const { origins, bad } = parseProxyList(config.NOTIFY_BASTYON_PROXIES)
    if (bad !== undefined) problems.set('NOTIFY_BASTYON_PROXIES', `NOTIFY_BASTYON_PROXIES must be ${NOTIFY_BASTYON_PROXIES_RULE} (got ${JSON.stringify(bad)})`)
    else if (origins.length === 0 && notificationsOn) problems.set('NOTIFY_BASTYON_PROXIES', 'NOTIFY_BASTYON_PROXIES must name at least one proxy while notifications are on (or set NOTIFICATIONS=false)')
  }
  if (typeof config.TELEGRAM_BOT_TOKEN === 'string' && config.TELEGRAM_BOT_TOKEN !== '') {
    if (!/^\d{1,20}:[A-Za-z0-9_-]{20,100}$/.test(config.TELEGRAM_BOT_TOKEN)) problems.set('TELEGRAM_BOT_TOKEN', `TELEGRAM_BOT_TOKEN must be ${TELEGRAM_BOT_TOKEN_RULE}`)
    else if (!notificationsOn) problems.set('TELEGRAM_BOT_TOKEN', 'TELEGRAM_BOT_TOKEN needs notifications on (BASTYON_APP_ID, and NOTIFICATIONS not false): Telegram is one of their channels')
    if (typeof config.TELEGRAM_BOT_USERNAME !== 'string' || !/^@?[A-Za-z][A-Za-z0-9_]{1,28}[Bb][Oo][Tt]$/.test(config.TELEGRAM_BOT_USERNAME)) {
      problems.set('TELEGRAM_BOT_USERNAME', `TELEGRAM_BOT_USERNAME must be ${TELEGRAM_BOT_USERNAME_RULE} (got ${JSON.stringify(config.TELEGRAM_BOT_USERNAME)})`)
    }
  }
  if (typeof config.TELEGRAM_API_URL === 'string' && !isPlainHttpUrl(config.TELEGRAM_API_URL)) problems.set('TELEGRAM_API_URL', `TELEGRAM_API_URL must be ${TELEGRAM_API_URL_RULE} (got ${JSON.stringify(config.TELEGRAM_API_URL)})`)
  if (typeof config.TELEGRAM_WEBHOOK_URL === 'string' && config.TELEGRAM_WEBHOOK_URL !== '') {
    if (!isHttpUrl(config.TELEGRAM_WEBHOOK_URL)) problems.set('TELEGRAM_WEBHOOK_URL', `TELEGRAM_WEBHOOK_URL must be ${TELEGRAM_WEBHOOK_URL_RULE} (got ${JSON.stringify(config.TELEGRAM_WEBHOOK_URL)})`)
    else if (config.TELEGRAM_BOT_TOKEN === '') problems.set('TELEGRAM_WEBHOOK_URL', 'TELEGRAM_WEBHOOK_URL needs TELEGRAM_BOT_TOKEN: the webhook is the bot\'s')
  }
  if (typeof config.TELEGRAM_WEBHOOK_SECRET === 'string' && config.TELEGRAM_WEBHOOK_SECRET !== '' && !/^[A-Za-z0-9_-]{1,256}$/.test(config.TELEGRAM_WEBHOOK_SECRET)) {
    // The secret itself is never echoed.
    problems.set('TELEGRAM_WEBHOOK_SECRET', `TELEGRAM_WEBHOOK_SECRET must be ${TELEGRAM_WEBHOOK_SECRET_RULE}`)
  }
  for (const [name, rule] of [['NOTIFY_INVOICE_CONFIRMED_HEADER', NOTICE_HEADER_RULE], ['NOTIFY_ENTITLEMENT_GRANTED_HEADER', NOTICE_HEADER_RULE], ['NOTIFY_EXPIRY_HEADER', NOTICE_HEADER_RULE], ['NOTIFY_INVOICE_CONFIRMED_PATH', NOTICE_PATH_RULE], ['NOTIFY_ENTITLEMENT_GRANTED_PATH', NOTICE_PATH_RULE], ['NOTIFY_EXPIRY_PATH', NOTICE_PATH_RULE]] as const) {
    const value = config[name]
    if (typeof value === 'string' && !(name.endsWith('_PATH') ? isNotificationPath(value) : isNotificationHeader(value))) problems.set(name, `${name} must be ${rule} (got ${JSON.stringify(value.slice(0, 120))})`)
  }
  if (typeof config.ADMIN_TOKEN === 'string' && config.ADMIN_TOKEN !== '' && !/^[\x21-\x7e]{32,}$/.test(config.ADMIN_TOKEN)) {
    // A secret: the message names the variable and the rule only.
    problems.set('ADMIN_TOKEN', `ADMIN_TOKEN must be ${ADMIN_TOKEN_RULE}`)
  }
  if (typeof config.WEB_CONCURRENCY === 'number' && config.WEB_CONCURRENCY > 1 && config.DATABASE_URL === '') {
    // The embedded database belongs to one process.
    const users = [
      ...(config.PAYMENT_ADDRESS !== '' ? ['payments on (PAYMENT_ADDRESS)'] : []),
      ...(storageOn ? ['storage on (BASTYON_APP_ID, unless STORAGE=false)'] : []),
      ...(notificationsOn ? ['notifications on (BASTYON_APP_ID, unless NOTIFICATIONS=false)'] : []),
    ]
    if (users.length > 0) problems.set('DATABASE_URL', `WEB_CONCURRENCY above 1 with ${users.join(' and ')} needs DATABASE_URL: the embedded database can be opened by one process only`)
  }
  if (!problems.has('STORAGE_MAX_VALUE_BYTES') && !problems.has('STORAGE_MAX_USER_BYTES') && (config.STORAGE_MAX_VALUE_BYTES as number) > (config.STORAGE_MAX_USER_BYTES as number)) {
    problems.set('STORAGE_MAX_VALUE_BYTES', 'STORAGE_MAX_VALUE_BYTES must not be above STORAGE_MAX_USER_BYTES: a value that large could never be stored')
  }
  if (typeof config.APP_ADMINS === 'string' && config.APP_ADMINS !== '') {
    const bad = config.APP_ADMINS.split(',').map(address => address.trim()).find(address => !isPocketnetAddress(address, config.POCKETNET_NETWORK as PocketnetNetwork))
    if (bad !== undefined) problems.set('APP_ADMINS', `APP_ADMINS must be ${APP_ADMINS_RULE} (got ${JSON.stringify(bad)})`)
    else if (!storageOn) problems.set('APP_ADMINS', 'APP_ADMINS needs BASTYON_APP_ID (and STORAGE not false): admins write the collections signed in')
  }
  if (problems.size > 0) throw new ConfigError([...problems.values()])
  return config as AppConfig
}

function isHttpUrl (value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

/** An http(s) URL without a query or a fragment: a base that paths are added to. */
function isPlainHttpUrl (value: string): boolean {
  return isHttpUrl(value) && new URL(value).search === '' && new URL(value).hash === ''
}

function isRedisUrl (value: string): boolean {
  try {
    parseRedisUrl(value)
    return true
  } catch {
    return false
  }
}

function isWindow (text: string): boolean {
  try {
    parseWindow(text)
    return true
  } catch {
    return false
  }
}
