// The demo mini-app: four panels on this service's /api routes, and, inside Bastyon, sign-in.
// `?refreshMs=` sets the node panel's refresh interval (default 5000 ms); `?commentsPageSize=`
// the post panel's comments per page (default 20).
import { connectBastyon } from './js/bastyon.js'
import { startNodePanel } from './js/node-panel.js'
import { createPostPanel } from './js/post-panel.js'
import { createProfilePanel } from './js/profile-panel.js'
import { createSearchPanel } from './js/search-panel.js'
import { createSignIn } from './js/sign-in.js'

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

// Inside Bastyon only: standalone, the sign-in buttons stay hidden.
const bastyon = await connectBastyon()
if (bastyon) createSignIn(document.getElementById('account'), { bastyon, profile })
