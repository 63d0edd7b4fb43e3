// Sign in with Bastyon, through the page's client: the host signs a single-use challenge from this
// service, which trades the signature for a session. The client keeps the session in memory only
// (never in storage) and sends its token to /api/me and to sign-out; a token the service refuses
// (signed out elsewhere, expired) is forgotten there and here.
import { client } from './client.js'
import { requestJson } from './api.js'
import { onClick, setStatus } from './dom.js'

const failure = answer => `${answer.message}: ${answer.error ?? 'no detail'}`

/**
 * @param {HTMLElement} root holds the sign-in, my-profile and sign-out buttons and the auth status
 * @param {{
 *   profile: { render (profile: object): void, message (text: string, options?: { error?: boolean, address?: string }): void },
 * }} options
 */
export function createSignIn (root, { profile }) {
  const signInButton = root.querySelector('[data-testid="sign-in"]')
  const myProfileButton = root.querySelector('[data-testid="my-profile"]')
  const signOutButton = root.querySelector('[data-testid="sign-out"]')
  const status = root.querySelector('[data-testid="auth-status"]')

  function signedOut (text = '', error = false) {
    const hadFocus = root.contains(document.activeElement)
    root.dataset.state = 'signed-out'
    signInButton.hidden = false
    myProfileButton.hidden = true
    signOutButton.hidden = true
    setStatus(status, text, error)
    if (hadFocus) signInButton.focus()
  }

  function signedIn (address) {
    root.dataset.state = 'signed-in'
    signInButton.hidden = true
    myProfileButton.hidden = false
    signOutButton.hidden = false
    setStatus(status, `Signed in as ${address}`)
    myProfileButton.focus()
  }

  async function signIn () {
    setStatus(status, 'Asking Bastyon to sign…')
    try {
      signedIn((await client.signIn()).address)
    } catch (error) {
      signedOut(error.message, true)
    }
  }

  async function showMyProfile () {
    if (!client.session) return signedOut()
    profile.message('Loading…')
    const answer = await requestJson('/api/me', { auth: true })
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
    try {
      await client.signOut()
      signedOut('Signed out.')
    } catch (error) {
      // Forgotten here whatever the answer: a token the service no longer knows is signed out too.
      signedOut(error.message, true)
    }
  }

  onClick(signInButton, signIn)
  onClick(myProfileButton, showMyProfile)
  onClick(signOutButton, signOut)

  root.hidden = false
  status.hidden = false
  signedOut()
}
