// Profile panel: a user looked up by address, with the API's 400/404/500 answers in plain words,
// or a profile object given to it (the signed-in user's).
import { getJson } from './api.js'
import { formatDate, setStatus } from './dom.js'

const PLAIN_WORDS = {
  400: 'This is not a valid Pocketnet address.',
  404: 'No account with this address.',
  500: 'The Pocketnet network did not answer.',
}

/** @param {HTMLElement} panel */
export function createProfilePanel (panel) {
  const form = panel.querySelector('form')
  const input = panel.querySelector('#profile-address')
  const status = panel.querySelector('[data-testid="profile-status"]')
  const card = panel.querySelector('[data-testid="profile-card"]')
  const avatar = panel.querySelector('[data-testid="profile-avatar"]')
  const initials = panel.querySelector('[data-testid="profile-initials"]')
  const field = name => panel.querySelector(`[data-testid="profile-${name}"]`)
  // Only the latest lookup, or the latest message, gets the panel.
  let latest = 0

  avatar.addEventListener('error', () => {
    avatar.hidden = true
    initials.hidden = false
  })

  /** Hides the card and shows `text`; `address`, when given, goes in the address field. */
  function message (text, { error = false, address } = {}) {
    latest++
    if (address !== undefined) input.value = address
    card.hidden = true
    setStatus(status, text, error)
  }

  /** Shows a profile object as the node answers it (name, address, reputation, postcnt, regdate, i). */
  function render (profile) {
    latest++
    input.value = String(profile.address ?? '')
    setStatus(status, profile.deleted ? 'This account was deleted.' : '')
    const name = profile.name || 'Unnamed account'
    field('name').textContent = name
    field('address').textContent = String(profile.address ?? '')
    field('reputation').textContent = String(profile.reputation ?? 0)
    field('posts').textContent = String(profile.postcnt ?? 0)
    field('regdate').textContent = formatDate(profile.regdate)
    initials.textContent = name.slice(0, 1).toUpperCase()
    // Only http(s) images: an avatar field is user content too.
    const url = typeof profile.i === 'string' && /^https?:\/\//.test(profile.i) ? profile.i : ''
    avatar.hidden = url === ''
    initials.hidden = url !== ''
    if (url) {
      avatar.alt = `Avatar of ${name}`
      avatar.src = url
    } else {
      avatar.removeAttribute('src')
    }
    card.hidden = false
  }

  /** Looks `address` up and shows it. */
  async function show (address) {
    message('Loading…', { address })
    const mine = latest
    const answer = await getJson(`/api/user/${encodeURIComponent(address.trim())}`)
    if (mine !== latest) return
    if (!answer.ok) {
      const plain = PLAIN_WORDS[answer.status] ?? answer.message
      setStatus(status, `${plain} (${answer.message}: ${answer.error ?? 'no detail'})`, true)
      return
    }
    render(answer.data)
  }

  form.addEventListener('submit', event => {
    event.preventDefault()
    show(input.value)
  })

  return {
    show,
    render,
    message,
    focus () {
      panel.scrollIntoView({ behavior: 'smooth', block: 'start' })
      input.focus()
    },
  }
}
