// Sign in with Bastyon: the host signs a single-use challenge from this service, which trades the
// signature for a token. The token lives in this module only (never in storage) and goes out as
// `Authorization: Bearer` to /api/me and to sign-out.
import { requestJson } from './api.js'
import { setStatus } from './dom.js'

/** The session token while signed in; gone on reload, sign-out, or when the service refuses it. */
let token

const failure = answer => `${answer.message}: ${answer.error ?? 'no detail'}`

/**
 * @param {HTMLElement} root holds the sign-in, my-profile and sign-out buttons and the auth status
 * @param {{
 *   bastyon: { sign (text: string): Promise<object> },
 *   profile: { render (profile: object): void, message (text: string, options?: { error?: boolean, address?: string }): void },
 * }} options
 */
export function createSignIn (root, { bastyon, profile }) {
  const signInButton = root.querySelector('[data-testid="sign-in"]')
  const myProfileButton = root.querySelector('[data-testid="my-profile"]')
  const signOutButton = root.querySelector('[data-testid="sign-out"]')
  const status = root.querySelector('[data-testid="auth-status"]')

  function signedOut (text = '', error = false) {
    const hadFocus = root.contains(document.activeElement)
    token = undefined
    root.dataset.state = 'signed-out'
    signInButton.hidden = false
    myProfileButton.hidden = true
    signOutButton.hidden = true
    setStatus(status, text, error)
    if (hadFocus) signInButton.focus()
  }

  function signedIn (newToken, address) {
    token = newToken
    root.dataset.state = 'signed-in'
    signInButton.hidden = true
    myProfileButton.hidden = false
    signOutButton.hidden = false
    setStatus(status, `Signed in as ${address}`)
    myProfileButton.focus()
  }

  async function signIn () {
    setStatus(status, 'Asking Bastyon to sign…')
    const challenge = await requestJson('/api/auth/challenge', { method: 'POST' })
    if (!challenge.ok) return signedOut(failure(challenge), true)
    let signature
    try {
      signature = await bastyon.sign(challenge.data.challenge)
    } catch (err) {
      return signedOut(`Not signed in: ${err.message}`, true)
    }
    const session = await requestJson('/api/auth/session', { method: 'POST', body: { signature } })
    if (!session.ok) return signedOut(failure(session), true)
    signedIn(session.data.token, session.data.address)
  }

  async function showMyProfile () {
    if (!token) return signedOut()
    profile.message('Loading…')
    const answer = await requestJson('/api/me', { token })
    if (answer.status === 401) {
      profile.message('')
      return signedOut(failure(answer), true)
    }
    if (!answer.ok) return profile.message(failure(answer), { error: true })
    const { address, profile: user } = answer.data
    if (user) profile.render(user)
    else profile.message(`This address has no account yet: ${address}`, { address })
  }

  async function signOut () {
    const answer = await requestJson('/api/auth/session', { method: 'DELETE', token })
    // Forgotten here whatever the answer: a token the service no longer knows is signed out too.
    signedOut(answer.ok ? 'Signed out.' : failure(answer), !answer.ok)
  }

  /** Runs `action` with `button` disabled, so that one click makes one request. */
  const onClick = (button, action) => button.addEventListener('click', async () => {
    button.disabled = true
    try {
      await action()
    } finally {
      button.disabled = false
    }
  })
  onClick(signInButton, signIn)
  onClick(myProfileButton, showMyProfile)
  onClick(signOutButton, signOut)

  root.hidden = false
  status.hidden = false
  signedOut()
}
