import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { agreedTip, NO_TIP, standingOf } from '../../packages/pocketnet-client/chain-tip.js'

const LAG = 3

describe('agreedTip', () => {
  it('is no height while no node reports one', () => {
    assert.deepEqual(agreedTip([], LAG), NO_TIP)
  })

  it('believes a lone node, there being no other word to weigh', () => {
    assert.deepEqual(agreedTip([500], LAG), { height: 500, corroborated: false })
  })

  it('is the highest height two nodes reach: one node claiming a million blocks more moves nothing', () => {
    assert.deepEqual(agreedTip([1000, 1_001_000, 999], LAG), { height: 1000, corroborated: true })
    assert.deepEqual(agreedTip([1_001_000, 1000, 1000, 1000], LAG), { height: 1000, corroborated: true })
  })

  it('is not pulled down by one node claiming to be far behind', () => {
    assert.deepEqual(agreedTip([1000, 1000, 1], LAG), { height: 1000, corroborated: true })
  })

  it('is uncorroborated when no two nodes are within the lag of it', () => {
    assert.deepEqual(agreedTip([1000, 900], LAG), { height: 900, corroborated: false })
    assert.deepEqual(agreedTip([1000, 900, 500], LAG), { height: 900, corroborated: false })
  })

  it('counts nodes a block or two apart as agreeing', () => {
    assert.deepEqual(agreedTip([1002, 1000], LAG), { height: 1000, corroborated: true })
  })
})

describe('standingOf', () => {
  const tip = agreedTip([1000, 1000, 1_001_000], LAG)

  it('keeps nodes within the lag of the tip in step, either side', () => {
    for (const height of [997, 1000, 1003]) assert.equal(standingOf(height, tip, LAG), 'in-step', String(height))
  })

  it('calls a node more than the lag behind lagging', () => {
    assert.equal(standingOf(996, tip, LAG), 'lagging')
  })

  it('calls a node more than the lag ahead of a corroborated tip ahead', () => {
    assert.equal(standingOf(1004, tip, LAG), 'ahead')
    assert.equal(standingOf(1_001_000, tip, LAG), 'ahead')
  })

  it('calls nobody ahead of a tip no two nodes agree on: nothing tells the liar from the honest node', () => {
    const split = agreedTip([1_001_000, 1000], LAG)
    assert.equal(standingOf(1_001_000, split, LAG), 'in-step')
    assert.equal(standingOf(1000, split, LAG), 'in-step')
  })

  it('keeps a node that has not reported in step, and everyone while there is no tip', () => {
    assert.equal(standingOf(undefined, tip, LAG), 'in-step')
    assert.equal(standingOf(5, NO_TIP, LAG), 'in-step')
  })
})
