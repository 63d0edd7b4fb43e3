/**
 * The service's configuration: one TypeBox schema for the environment, its type, and
 * loadConfig(env), which fails fast with one line per bad variable.
 */
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'
import { DEFAULT_NODES, parseNodeList } from '../lib/index.js'

const POCKETNET_NODES_RULE = 'a comma-separated list of http(s) node URLs such as http://127.0.0.1:38081'
const LogLevel = Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map(level => Type.Literal(level)))

export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'an integer from 0 to 65535' }),
  HOST: Type.String({ minLength: 1, default: '0.0.0.0', description: 'a host name or IP address to listen on' }),
  POCKETNET_NODES: Type.String({ default: DEFAULT_NODES.join(','), description: POCKETNET_NODES_RULE }),
  RPC_DEADLINE_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 5000, description: 'an integer from 100 to 120000 (milliseconds)' }),
  RPC_TIMEOUT_MS: Type.Integer({ minimum: 50, maximum: 120_000, default: 2000, description: 'an integer from 50 to 120000 (milliseconds)' }),
  POCKETNET_PROBE_INTERVAL_MS: Type.Integer({ minimum: 50, maximum: 3_600_000, default: 30_000, description: 'an integer from 50 to 3600000 (milliseconds)' }),
  POCKETNET_CONNECTIONS_PER_NODE: Type.Integer({ minimum: 1, maximum: 1024, default: 16, description: 'an integer from 1 to 1024' }),
  POCKETNET_MAX_LAG_BLOCKS: Type.Integer({ minimum: 0, maximum: 10_000, default: 3, description: 'an integer from 0 to 10000' }),
  CACHE_TTL_NODEINFO_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 5000, description: 'a whole number of milliseconds (0 turns the cache off)' }),
  CACHE_TTL_PROFILE_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 60_000, description: 'a whole number of milliseconds (0 turns the cache off)' }),
  CACHE_TTL_SEARCH_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 30_000, description: 'a whole number of milliseconds (0 turns the cache off)' }),
  CACHE_MAX_ENTRIES: Type.Integer({ minimum: 1, maximum: 10_000_000, default: 10_000, description: 'an integer from 1 to 10000000' }),
  CACHE_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 17_179_869_184, default: 67_108_864, description: 'a number of bytes from 1024' }),
  CACHE_SERVE_STALE: Type.Boolean({ default: true, description: 'true or false' }),
  CORS_ORIGINS: Type.String({ default: '', description: 'a comma-separated list of origins such as https://app.example, or * for any (empty: no cross-origin calls)' }),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, maximum: 1_000_000_000, default: 300, description: 'a positive integer (requests per window and client IP)' }),
  RATE_LIMIT_WINDOW: Type.String({ minLength: 1, default: '1 minute', pattern: '^(\\d+|\\d+ ?(ms|s|m|h|second|seconds|minute|minutes|hour|hours))$', description: 'milliseconds, or a duration such as "1 minute" or "30 seconds"' }),
  TRUST_PROXY: Type.String({ default: '', description: 'empty (trust no proxy), true, or a comma-separated list of proxy IPs or CIDRs whose X-Forwarded-For is believed' }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000, description: 'a whole number of milliseconds' }),
  MAX_URL_LENGTH: Type.Integer({ minimum: 64, maximum: 65_536, default: 2048, description: 'an integer from 64 to 65536' }),
  MAX_HEADER_BYTES: Type.Integer({ minimum: 1024, maximum: 1_048_576, default: 16_384, description: 'a number of bytes from 1024 to 1048576' }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000, description: 'an integer from 100 to 600000 (milliseconds)' }),
  HEAP_GROWING_PERCENT: Type.Integer({ minimum: 0, maximum: 1000, default: 50, description: 'an integer from 0 to 1000 (0: V8\'s own heap growth)' }),
  NODE_ENV: Type.String({ default: 'production', description: 'development, production or test' }),
  LOG_LEVEL: Type.Unsafe<Static<typeof LogLevel>>({ ...LogLevel, default: 'info', description: 'one of fatal, error, warn, info, debug, trace, silent' }),
})

export type AppConfig = Static<typeof ConfigSchema>

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
  if (problems.size > 0) throw new ConfigError([...problems.values()])
  return config as AppConfig
}
