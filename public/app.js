// The demo mini-app: three panels on this service's /api routes, and, inside Bastyon, sign-in.
// `?refreshMs=` sets the node panel's refresh interval (default 5000 ms).
import { connectBastyon } from './js/bastyon.js'
import { startNodePanel } from './js/node-panel.js'
import { createProfilePanel } from './js/profile-panel.js'
import { createSearchPanel } from './js/search-panel.js'
import { createSignIn } from './js/sign-in.js'

const refreshMs = Number(new URLSearchParams(location.search).get('refreshMs')) || 5000

startNodePanel(document.getElementById('node-panel'), { refreshMs })
const profile = createProfilePanel(document.getElementById('profile-panel'))
createSearchPanel(document.getElementById('search-panel'), {
  onAuthor (address) {
    profile.show(address)
    profile.focus()
  },
})

// Inside Bastyon only: standalone, the sign-in buttons stay hidden.
const bastyon = await connectBastyon()
if (bastyon) createSignIn(document.getElementById('account'), { bastyon, profile })
