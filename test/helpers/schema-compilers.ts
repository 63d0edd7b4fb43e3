/**
 * Schema compilers shared by every app a test process builds (startApp passes them to buildApp).
 * Fastify's own compile each route's schemas anew for every app, and the suite builds about a
 * hundred: Ajv and fast-json-stringify were about a tenth of its CPU (bench/results.md, "The
 * suite, third round"). These are Fastify's own compilers (@fastify/ajv-compiler,
 * @fastify/fast-json-stringify-compiler, which Fastify depends on and installs) kept for the
 * process: a schema object is compiled once.
 *
 * One set per network: the address format checks addresses of the app's network, and Ajv keeps
 * the formats of the first app it compiled for. A schema that changes with the configuration is
 * a new object per app, so it is compiled for each; two schemas under one `$id` would share one
 * validator, so that throws.
 *
 * The one difference from production, where Fastify keeps its own: given compilers count as
 * custom, and Fastify then compiles a route's headers schema as written rather than with its
 * property names lowercased. No route has one; one written with capitals would fail here, not
 * pass.
 */
import AjvCompiler, { type BuildCompilerFromPool } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { SchemaCompilers } from '../../src/http/server-options.js'

type ValidatorFactory = BuildCompilerFromPool
type SerializerFactory = NonNullable<SchemaCompilers['buildSerializer']>

const byNetwork = new Map<string, SchemaCompilers>()

/** The process's compilers for apps of `network`. */
export function sharedCompilers (network: string): SchemaCompilers {
  let compilers = byNetwork.get(network)
  if (compilers === undefined) {
    compilers = { buildValidator: validatorsOnce(), buildSerializer: serializersOnce() }
    byNetwork.set(network, compilers)
  }
  return compilers
}

/** Ajv's pool (one instance per set of shared schemas and options), which compiles a schema object once. */
function validatorsOnce (): ValidatorFactory {
  const pool = AjvCompiler()
  const schemasById = new Map<string, unknown>()
  return (externalSchemas, options) => {
    // Typed as taking the schema, but called by Fastify, and calling Ajv, with the route: { schema, method, url, httpPart }.
    const compile = pool(externalSchemas, options) as unknown as (route: { schema: unknown }) => unknown
    const compileOnce = (route: { schema: unknown }): unknown => {
      const id = (route.schema as { $id?: unknown } | null)?.$id
      if (typeof id === 'string') {
        if ((schemasById.get(id) ?? route.schema) !== route.schema) throw new Error(`Two schemas with $id ${id}: the shared compilers would give both one validator`)
        schemasById.set(id, route.schema)
      }
      return compile(route)
    }
    return compileOnce as unknown as ReturnType<ValidatorFactory>
  }
}

/** fast-json-stringify's compiler, with each schema object's serializer kept. */
function serializersOnce (): SerializerFactory {
  const select = SerializerSelector()
  const byOptions = new Map<string, ReturnType<SerializerFactory>>()
  return (externalSchemas, options) => {
    const key = JSON.stringify([externalSchemas, options])
    let compile = byOptions.get(key)
    if (compile === undefined) {
      const build = select(externalSchemas, options)
      const compiled = new WeakMap<object, ReturnType<typeof build>>()
      compile = (route) => {
        if (typeof route.schema !== 'object' || route.schema === null) return build(route)
        let serialize = compiled.get(route.schema)
        if (serialize === undefined) {
          serialize = build(route)
          compiled.set(route.schema, serialize)
        }
        return serialize
      }
      byOptions.set(key, compile)
    }
    return compile
  }
}
