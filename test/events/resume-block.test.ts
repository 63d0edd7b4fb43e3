/**
 * Where a new holder of the ingest lease resumes (src/events/resume-block.ts): the last block
 * noted, on a real redis-server, and nothing from a value that is not a block.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Redis } from 'ioredis'
import { RedisLink } from 'pocketnet-client'
import { ResumeBlock } from '../../src/events/resume-block.js'
import { startRedis } from '../helpers/start-redis.js'
import { waitFor } from '../helpers/wait-for.js'

describe('the block a new ingest lease holder resumes from', () => {
  it('is the last one noted, kept for as long as asked, and none when Redis holds no block', async (t) => {
    const redis = await startRedis(t)
    const link = new RedisLink({ url: redis.url, keyPrefix: 'test:' })
    t.after(() => link.close())
    const look = new Redis(redis.url)
    t.after(() => look.disconnect())
    await waitFor('the link to connect', () => link.available)
    const resume = new ResumeBlock(link, 60_000)
    assert.equal(await resume.read(), undefined)

    resume.note({ height: 42, blockHash: 'ab'.repeat(32) })
    await waitFor('the block to be noted', async () => await resume.read() !== undefined)
    assert.deepEqual(await resume.read(), { height: 42, blockHash: 'ab'.repeat(32) })
    const kept = await look.pttl('test:events:ingest:tip')
    assert.ok(kept > 50_000 && kept <= 60_000, `kept ${kept} ms`)

    await look.set('test:events:ingest:tip', '42:not-a-hash')
    assert.equal(await resume.read(), undefined)
  })
})
