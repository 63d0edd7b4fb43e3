import { Type } from 'typebox'
import { ErrorEnvelope } from './envelope.js'

const NodeState = Type.Object({
  name: Type.String({ description: 'The node\'s position in POCKETNET_NODES ("node 2"); URLs stay out of answers' }),
  usable: Type.Boolean({ description: 'Answered, circuit closed, in step with the chain tip the nodes agree on' }),
  circuit: Type.String({ description: 'closed, open or half-open' }),
  chain: Type.Union([Type.Literal('in-step'), Type.Literal('lagging'), Type.Literal('ahead')], {
    description: 'Where its height stands against the tip the answering nodes agree on: lagging (more than POCKETNET_MAX_LAG_BLOCKS behind) and ahead (claiming more blocks than the others agree on) take calls only when no node in step can',
  }),
  version: Type.Optional(Type.String()),
  height: Type.Optional(Type.Integer()),
  latencyMs: Type.Optional(Type.Number()),
  errorRate: Type.Number(),
  consecutiveFailures: Type.Integer(),
  lastErrorCode: Type.Optional(Type.String({ description: 'The code of its last failure (RPC_ERR_TIMEOUT, RPC_ERR_TRANSPORT, ...); the node\'s own words stay in the log' })),
  inFlight: Type.Integer({ description: 'Calls sent to the node and not yet answered' }),
  concurrencyLimit: Type.Integer({ description: 'How many calls the node is given at once now: adapts between POCKETNET_NODE_THREADS and POCKETNET_CONNECTIONS_PER_NODE' }),
  queued: Type.Integer({ description: 'Calls waiting for a free slot on the node' }),
})

const Readiness = Type.Object({
  message: Type.String(),
  data: Type.Object({
    usableNodes: Type.Integer(),
    bestHeight: Type.Optional(Type.Integer({ description: 'The chain height the answering nodes agree on: the highest that two of them reach (one node alone is believed)' })),
    redis: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('off')], {
      description: 'ok: answers and rate limits are shared through Redis; degraded: REDIS_URL is set but Redis is unavailable, and this instance goes on alone; off: no REDIS_URL',
    }),
    nodes: Type.Array(NodeState),
    payouts: Type.Optional(Type.Object({
      address: Type.String({ description: 'The hot wallet\'s address (PAYOUT_KEY_FILE)' }),
      balanceSat: Type.Optional(Type.Integer({ description: 'Its confirmed outputs not spent in a node\'s mempool, in satoshi; absent when no node could list them (never fails readiness)' })),
    }, { description: 'With payouts on: the app\'s hot wallet' })),
  }),
})

export const HealthzSchema = {
  tags: ['operations'],
  summary: 'Liveness',
  description: 'Answers 200 while the process can serve HTTP, whatever the nodes do.',
  response: { 200: Type.Object({ message: Type.String() }) },
}

export const ReadyzSchema = {
  tags: ['operations'],
  summary: 'Readiness',
  description: '200 when at least one Pocketnet node is usable, 503 otherwise, with the state of each node and of Redis (which never fails readiness).',
  response: { 200: Readiness, 503: Type.Union([Readiness, ErrorEnvelope]) },
}
