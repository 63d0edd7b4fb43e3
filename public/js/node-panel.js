// Node panel: version, chain height and time since the last block, refreshed while the page is
// visible, and live: each block the service's event stream announces shows at once.
import { getJson } from './api.js'
import { setStatus, timeAgo } from './dom.js'

/**
 * @param {HTMLElement} panel
 * @param {{ refreshMs: number }} options
 */
export function startNodePanel (panel, { refreshMs }) {
  const status = panel.querySelector('[data-testid="node-status"]')
  const version = panel.querySelector('[data-testid="node-version"]')
  const height = panel.querySelector('[data-testid="node-height"]')
  const age = panel.querySelector('[data-testid="node-age"]')
  let timer

  async function refresh () {
    const answer = await getJson('/api/nodeinfo')
    if (answer.ok) {
      panel.dataset.state = 'ok'
      setStatus(status, `Connected: ${answer.data.chain ?? 'main'} chain`)
      version.textContent = String(answer.data.version ?? '–')
      height.textContent = String(answer.data.lastblock?.height ?? '–')
      age.textContent = answer.data.lastblock?.time ? timeAgo(answer.data.lastblock.time) : '–'
    } else {
      panel.dataset.state = 'error'
      setStatus(status, `${answer.message}. ${answer.error ?? ''}`.trim(), true)
    }
    schedule()
  }

  // One request at a time: the next starts after this one answered, and none while hidden.
  function schedule () {
    clearTimeout(timer)
    if (!document.hidden) timer = setTimeout(refresh, refreshMs)
  }

  document.addEventListener('visibilitychange', () => {
    if (document.hidden) clearTimeout(timer)
    else refresh()
  })
  refresh()
  followBlocks()

  // The live event stream (GET /api/events): a block shows as soon as the service hears of it.
  // The browser reconnects by itself, with the last id seen; the polling above goes on meanwhile.
  function followBlocks () {
    if (typeof EventSource !== 'function') return
    const stream = new EventSource('/api/events?topics=blocks')
    stream.addEventListener('block', event => {
      const block = JSON.parse(event.data)
      panel.dataset.live = 'true'
      height.textContent = String(block.height)
      age.textContent = timeAgo(block.time)
    })
    stream.addEventListener('resync', () => refresh())
  }
}
