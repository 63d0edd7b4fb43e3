import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Registry } from 'prom-client'
import { CounterFamily, HistogramFamily } from '../../src/metrics/families.js'

describe('metric families', () => {
  it('expose counters and cumulative histogram buckets in Prometheus text', async () => {
    const registry = new Registry()
    const requests = new CounterFamily('requests_total', 'Requests', ['route', 'status'], registry)
    const duration = new HistogramFamily('duration_seconds', 'Duration', ['route'], [0.1, 1], registry)
    requests.inc('/a', '200')
    requests.inc('/a', '200')
    requests.inc('/b', '404')
    requests.inc('/a', '404')
    const series = duration.series('/a')
    assert.equal(duration.series('/a'), series, 'one series per label set')
    for (const value of [0.05, 0.1, 0.5, 3]) duration.observe(series, value)
    const text = await registry.metrics()
    for (const line of [
      '# TYPE requests_total counter',
      'requests_total{route="/a",status="200"} 2',
      'requests_total{route="/b",status="404"} 1',
      'requests_total{route="/a",status="404"} 1',
      '# TYPE duration_seconds histogram',
      'duration_seconds_bucket{le="0.1",route="/a"} 2',
      'duration_seconds_bucket{le="1",route="/a"} 3',
      'duration_seconds_bucket{le="+Inf",route="/a"} 4',
      'duration_seconds_sum{route="/a"} 3.65',
      'duration_seconds_count{route="/a"} 4',
    ]) assert.ok(text.split('\n').includes(line), `missing: ${line}\n${text}`)
    registry.resetMetrics()
    assert.doesNotMatch(await registry.metrics(), /route=/)
  })
})
