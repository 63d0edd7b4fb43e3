/**
 * A Server-Sent Events client for tests: opens `GET url` with fetch, parses the frames as they
 * come (id, event, JSON data; comments kept apart), and waits for what a test expects. Waits
 * only wait for the service to send: they fail after a generous bound, and never measure speed.
 */
import assert from 'node:assert/strict'

export interface SseFrame {
  id: string | undefined
  event: string
  data: any
}

export interface SseClient {
  status: number
  headers: Headers
  frames: SseFrame[]
  comments: string[]
  /** The last `retry:` hint, in milliseconds. */
  retry: number | undefined
  /** True once the service ended the stream. */
  ended: boolean
  /** Resolves once `condition` holds of what has come. */
  until (what: string, condition: (frames: SseFrame[]) => boolean, hangAfterMs?: number): Promise<void>
  close (): void
}

type WithAfter = { after (fn: () => unknown): void }

export async function openStream (t: WithAfter, url: string, headers: Record<string, string> = {}, read = true): Promise<SseClient> {
  const controller = new AbortController()
  const response = await fetch(url, { headers, signal: controller.signal })
  const client: SseClient = {
    status: response.status,
    headers: response.headers,
    frames: [],
    comments: [],
    retry: undefined,
    ended: false,
    async until (what, condition, hangAfterMs = 30_000) {
      const deadline = performance.now() + hangAfterMs
      while (!condition(client.frames)) {
        assert.ok(performance.now() < deadline, `Still waiting after ${hangAfterMs} ms for ${what}; got ${JSON.stringify(client.frames)}`)
        assert.ok(!client.ended, `The stream ended before ${what}; got ${JSON.stringify(client.frames)}`)
        await new Promise(resolve => setTimeout(resolve, 5))
      }
    },
    close: () => controller.abort(),
  }
  t.after(() => controller.abort())
  if (response.status !== 200 || !read) return client
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let buffered = ''
  const pump = async (): Promise<void> => {
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffered += decoder.decode(value, { stream: true })
        let end
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, end)
          buffered = buffered.slice(end + 2)
          const fields: Record<string, string> = {}
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) client.comments.push(line.slice(1).trim())
            else {
              const colon = line.indexOf(':')
              fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart()
            }
          }
          if (fields.retry !== undefined) client.retry = Number(fields.retry)
          if (fields.data !== undefined) client.frames.push({ id: fields.id, event: fields.event ?? 'message', data: JSON.parse(fields.data) })
        }
      }
    } catch {
      // Aborted by the test.
    }
    client.ended = true
  }
  pump().catch(() => {})
  return client
}
