// Node panel: version, chain height and time since the last block, refreshed while the page is
// visible, and live: each block the service's event stream announces shows at once.
import { client } from './client.js'
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

  // Live events (`blocks`, through the page's client): a block shows as soon as the service hears
  // of it. The client reconnects by itself, from the last event; the polling above goes on meanwhile.
  function followBlocks () {
    client.follow(['blocks'], event => {
      if (event.event === 'resync') return refresh()
      if (event.event !== 'block') return
      panel.dataset.live = 'true'
      height.textContent = String(event.data.height)
      age.textContent = timeAgo(event.data.time)
    })
  }
}
