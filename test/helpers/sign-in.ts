/** Signs in to a running service as the demo page does: a challenge, the host's signature of it, a token. */
import assert from 'node:assert/strict'
import type { Dataset, UserRecord } from '../../devnode/data/generate.js'
import type { TestApp } from './build-app.js'
import { addressOf, sdkSign, type HostSignOptions } from '../../devnode/bastyon-host.js'

/** The mini-app id the sign-in tests run with. */
export const APP_ID = 'demo.pocketnet.app'

export type Answer = Awaited<ReturnType<TestApp['get']>>

export function postJson (service: TestApp, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return service.get(path, {
    method: 'POST',
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  })
}

export async function newChallenge (service: TestApp): Promise<string> {
  const { status, body } = await postJson(service, '/api/auth/challenge')
  assert.equal(status, 200, JSON.stringify(body))
  return body.data.challenge
}

export const bearer = (token: string): { headers: Record<string, string> } => ({ headers: { authorization: `Bearer ${token}` } })

/** A token for `options.key`, from a fresh challenge signed as the host signs it. */
export async function signIn (service: TestApp, options: HostSignOptions & { appId?: string }): Promise<{ token: string, address: string, expiresAt: string }> {
  const challenge = await newChallenge(service)
  const { status, body } = await postJson(service, '/api/auth/session', { signature: sdkSign(challenge, options.appId ?? APP_ID, options) })
  assert.equal(status, 200, JSON.stringify(body))
  return body.data
}

/**
 * Gives `key` an account in `dataset`: a live user with posts moves to the key's address, posts
 * included. The last such user not given away yet, so that tests picking the first ones are unaffected.
 */
export function giveAccount (dataset: Dataset, key: Uint8Array): UserRecord {
  const address = addressOf(key)
  const user = dataset.users.findLast(candidate => !candidate.deleted && candidate.postCount > 0 && !given.has(candidate))
  assert.ok(user && user !== dataset.users.find(candidate => !candidate.deleted && candidate.postCount > 0))
  given.add(user)
  dataset.usersByAddress.delete(user.address)
  for (const post of dataset.posts) if (post.address === user.address) post.address = address
  user.address = address
  dataset.usersByAddress.set(address, user)
  return user
}

const given = new WeakSet<UserRecord>()
