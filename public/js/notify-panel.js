// Notifications panel: "Notify me" opts the signed-in user in, through the page's client: the
// host registers them for this app's notifications at one of their Bastyon proxies
// (sdk.registerForNotifications), then the service records it (PUT /api/me/notifications/bastyon)
// and may push to them from then on. In `npm run demo` the host is the demo's stand-in, the proxy
// the demo's emulator, and the panel also shows what that proxy recorded for the user
// (GET /demo/notifications/pushes) and offers a gift (POST /demo/notifications/gift): an
// entitlement granted, which the service tells the user (NOTIFY_ON_ENTITLEMENT_GRANTED).
import { client } from './client.js'
import { requestJson } from './api.js'
import { element, onClick, setStatus } from './dom.js'

const failure = answer => `${answer.message}: ${answer.error ?? 'no detail'}`

/**
 * @param {HTMLElement} root the panel
 * @param {{ demo: boolean, pollMs?: number }} options `demo`: the demo's routes are there
 */
export function createNotifyPanel (root, { demo, pollMs = 1000 }) {
  const notifyButton = root.querySelector('[data-testid="notify-me"]')
  const giftButton = root.querySelector('[data-testid="notify-gift"]')
  const status = root.querySelector('[data-testid="notify-status"]')
  const pushesList = root.querySelector('[data-testid="notify-pushes"]')
  let polling

  function showPushes (pushes) {
    pushesList.replaceChildren(...pushes.map(push => element('li', { 'data-testid': 'notify-push' }, push.body)))
    pushesList.hidden = pushes.length === 0
  }

  async function readPushes () {
    const address = client.session?.address
    if (address === undefined) return
    const answer = await requestJson(`/demo/notifications/pushes?address=${encodeURIComponent(address)}`, { fresh: true })
    if (answer.ok) showPushes(answer.data.pushes)
  }

  async function notifyMe () {
    if (client.session === undefined) return setStatus(status, 'Sign in first.', true)
    setStatus(status, 'Asking Bastyon to register…')
    try {
      await client.notifications.optIn()
    } catch (error) {
      return setStatus(status, error.message, true)
    }
    root.dataset.state = 'on'
    setStatus(status, 'Notifications on: the app may tell you things while it is closed.')
    if (!demo) return
    giftButton.hidden = false
    clearInterval(polling)
    polling = setInterval(readPushes, pollMs)
    await readPushes()
  }

  async function gift () {
    const address = client.session?.address
    if (address === undefined) return setStatus(status, 'Sign in first.', true)
    const answer = await requestJson('/demo/notifications/gift', { method: 'POST', body: { address } })
    setStatus(status, answer.ok ? 'A gift is on its way: its notification follows.' : failure(answer), !answer.ok)
  }

  onClick(notifyButton, notifyMe)
  onClick(giftButton, gift)
  root.hidden = false
}
