// The demo mini-app: five panels on this service's /api routes, through the page's one client
// (js/client.js: bastyon-miniapp-client), and, inside Bastyon, sign-in, paying tips and opting in
// to notifications.
// `?refreshMs=` sets the node panel's refresh interval (default 5000 ms); `?commentsPageSize=`
// the post panel's comments per page (default 20); in `npm run demo` only, in a plain browser,
// `?wallet=demo` pays tips from the emulator's wallet and `?signer=<name>` signs in as a made-up
// user of that name.
import { hosting } from './js/client.js'
import { startNodePanel } from './js/node-panel.js'
import { createPostPanel } from './js/post-panel.js'
import { createProfilePanel } from './js/profile-panel.js'
import { createSearchPanel } from './js/search-panel.js'
import { createSignIn } from './js/sign-in.js'
import { createNotifyPanel } from './js/notify-panel.js'
import { createTipPanel } from './js/tip-panel.js'

const query = new URLSearchParams(location.search)
const refreshMs = Number(query.get('refreshMs')) || 5000
const commentsPageSize = Math.floor(Number(query.get('commentsPageSize'))) || 20

startNodePanel(document.getElementById('node-panel'), { refreshMs })
const profile = createProfilePanel(document.getElementById('profile-panel'))
function onAuthor (address) {
  profile.show(address)
  profile.focus()
}
const post = createPostPanel(document.getElementById('post-panel'), { onAuthor, pageSize: commentsPageSize })
createSearchPanel(document.getElementById('search-panel'), {
  onAuthor,
  onOpen (hash) {
    post.open(hash)
    post.focus()
  },
})

// At once, not after the host answers: the tip form must never submit as a plain HTML form.
createTipPanel(document.getElementById('tip-panel'))
// Signing in needs a host that signs: Bastyon's, or the demo's signer; else the buttons stay hidden.
const { signs, registers } = await hosting
if (signs) createSignIn(document.getElementById('account'), { profile })
// Opting in needs a host that registers: Bastyon's, or the demo's stand-in; else the panel stays hidden.
if (signs && registers !== 'none') createNotifyPanel(document.getElementById('notify-panel'), { demo: registers === 'demo' })
