// The demo mini-app: five panels on this service's /api routes, and, inside Bastyon, sign-in and
// paying tips. `?refreshMs=` sets the node panel's refresh interval (default 5000 ms);
// `?commentsPageSize=` the post panel's comments per page (default 20); `?tipPollMs=` how often
// the tip panel reads its invoice when the event stream is refused (default 5000 ms);
// `?wallet=demo` offers the demo wallet, which only `npm run demo` has, to pay tips standalone;
// `?signer=<name>` signs in standalone as a made-up user of that name, also in `npm run demo` only.
import { connectBastyon } from './js/bastyon.js'
import { connectDemoSigner } from './js/demo-signer.js'
import { connectDemoWallet } from './js/demo-wallet.js'
import { startNodePanel } from './js/node-panel.js'
import { createPostPanel } from './js/post-panel.js'
import { createProfilePanel } from './js/profile-panel.js'
import { createSearchPanel } from './js/search-panel.js'
import { createSignIn } from './js/sign-in.js'
import { createTipPanel } from './js/tip-panel.js'

const query = new URLSearchParams(location.search)
const refreshMs = Number(query.get('refreshMs')) || 5000
const commentsPageSize = Math.floor(Number(query.get('commentsPageSize'))) || 20
const tipPollMs = Number(query.get('tipPollMs')) || 5000
const demoWallet = query.get('wallet') === 'demo' ? connectDemoWallet() : Promise.resolve(undefined)

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

// Inside Bastyon only: standalone, the sign-in buttons stay hidden, and tips cannot be paid here
// (but by the demo wallet, in `npm run demo`).
const connecting = connectBastyon()
// At once, not after the host answers: the tip form must never submit as a plain HTML form.
createTipPanel(document.getElementById('tip-panel'), { bastyon: connecting, demoWallet, pollMs: tipPollMs })
const bastyon = await connecting
// Outside Bastyon, in the demo, `?signer=` signs in with the demo's signer instead.
const signer = bastyon ?? (query.has('signer') ? await connectDemoSigner(query.get('signer')) : undefined)
if (signer) createSignIn(document.getElementById('account'), { bastyon: signer, profile })
