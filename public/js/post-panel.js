// Post panel: one post or video opened from the search, with its top-level comments, newest
// first, a page at a time ("More comments" while the API says hasMore).
import { client } from './client.js'
import { getJson } from './api.js'
import { element, formatDate, setStatus } from './dom.js'

const PLAIN_WORDS = {
  400: 'This is not a valid post hash.',
  404: 'This post does not exist.',
  500: 'The Pocketnet network did not answer.',
}

const failure = answer => `${PLAIN_WORDS[answer.status] ?? answer.message} (${answer.message}: ${answer.error ?? 'no detail'})`

/** A link's address when it is http(s); '' for anything else (javascript:, data:, …). */
const httpUrl = value => (typeof value === 'string' && /^https?:\/\//i.test(value) ? value : '')

/**
 * A comment's text. The node keeps `msg` as the JSON text of `{message, url, images}`, each value
 * URL-encoded as Bastyon writes it; anything else is shown as it is.
 * @param {unknown} msg
 */
export function commentText (msg) {
  const raw = String(msg ?? '')
  let message
  try {
    message = JSON.parse(raw)?.message
  } catch {
    return raw
  }
  if (typeof message !== 'string') return raw
  try {
    return decodeURIComponent(message)
  } catch {
    return message
  }
}

/** "4.2 of 5 (12 ratings)" from the node's score count and sum. */
function score (content) {
  const count = Number(content.scoreCnt) || 0
  if (count === 0) return 'Not rated yet'
  const average = (Number(content.scoreSum) || 0) / count
  return `${average.toFixed(1)} of 5 (${count} ${count === 1 ? 'rating' : 'ratings'})`
}

/**
 * @param {HTMLElement} panel
 * @param {{ onAuthor: (address: string) => void, pageSize?: number }} options
 */
export function createPostPanel (panel, { onAuthor, pageSize = 20 }) {
  const heading = panel.querySelector('h2')
  const status = panel.querySelector('[data-testid="post-status"]')
  const card = panel.querySelector('[data-testid="post-card"]')
  const commentsPart = panel.querySelector('[data-testid="post-comments"]')
  const field = name => panel.querySelector(`[data-testid="post-${name}"]`)
  const commentsStatus = panel.querySelector('[data-testid="comments-status"]')
  const list = panel.querySelector('[data-testid="comments"]')
  const more = panel.querySelector('[data-testid="comments-more"]')
  // Only the latest post opened gets the panel; `comments` is where its comments are at.
  let latest = 0
  let comments = { hash: '', page: 0, shown: 0 }
  // The open post's comments, live: its topic, followed through the page's client.
  let live

  field('author').addEventListener('click', () => {
    if (panel.dataset.author) onAuthor(panel.dataset.author)
  })

  function render (content) {
    const author = content.userprofile?.name || content.address || 'unknown'
    panel.dataset.author = String(content.address ?? '')
    field('caption').textContent = String(content.c || '(no caption)')
    field('message').textContent = String(content.m ?? '')
    field('author').textContent = author
    field('author').disabled = !content.address
    field('date').textContent = formatDate(content.time)
    field('type').textContent = String(content.type ?? '')
    const tags = Array.isArray(content.t) ? content.t.map(String).filter(Boolean) : []
    field('tags').replaceChildren(...tags.map(tag => element('li', {}, `#${tag}`)))
    field('tags').hidden = tags.length === 0
    const url = httpUrl(content.u)
    const link = field('link')
    link.hidden = url === ''
    if (url) link.replaceChildren(element('a', { href: url, rel: 'noopener noreferrer nofollow', target: '_blank' }, url))
    else link.replaceChildren()
    field('score').textContent = score(content)
    field('comments-count').textContent = String(Number(content.comments) || 0)
    card.hidden = false
  }

  function comment (item) {
    const address = String(item.address ?? '')
    const name = item.userprofile?.name || item.name || address || 'unknown'
    const authorButton = element('button', { type: 'button', class: 'link', 'data-testid': 'comment-author' }, name)
    authorButton.disabled = address === ''
    authorButton.addEventListener('click', () => onAuthor(address))
    const replies = Number(item.children) || 0
    const meta = element('p', { class: 'meta' },
      authorButton,
      element('span', {}, formatDate(item.time)),
      element('span', { title: 'Up and down votes' }, `▲ ${Number(item.scoreUp) || 0} ▼ ${Number(item.scoreDown) || 0}`))
    if (replies > 0) meta.append(element('span', {}, `${replies} ${replies === 1 ? 'reply' : 'replies'}`))
    return element('li', { 'data-testid': 'comment', 'data-id': String(item.id ?? '') },
      meta,
      element('p', { class: 'text', 'data-testid': 'comment-text' }, commentText(item.msg)))
  }

  async function loadComments (mine, fresh = false) {
    panel.dataset.state = 'loading'
    more.disabled = true
    setStatus(commentsStatus, 'Loading comments…')
    const params = new URLSearchParams({ page: String(comments.page), pageSize: String(pageSize) })
    const answer = await getJson(`/api/content/${encodeURIComponent(comments.hash)}/comments?${params}`, { fresh })
    if (mine !== latest) return
    more.disabled = false
    if (!answer.ok) {
      panel.dataset.state = 'error'
      setStatus(commentsStatus, `${answer.message}: ${answer.error ?? 'no detail'}`, true)
      // A later page that failed can be asked for again.
      more.hidden = comments.page === 0
      return
    }
    const { results, total, hasMore } = answer.data
    list.append(...results.map(comment))
    comments.page++
    comments.shown += results.length
    more.hidden = !hasMore
    setStatus(commentsStatus, comments.shown === 0
      ? 'No comments yet.'
      : `Showing ${comments.shown} of ${Number(total) || comments.shown} top-level comments, newest first.`)
    panel.dataset.state = 'done'
  }

  /** Loads the post `hash` names, then the first page of its comments. */
  async function open (hash) {
    const mine = ++latest
    panel.hidden = false
    panel.dataset.state = 'loading'
    panel.dataset.hash = hash
    card.hidden = true
    commentsPart.hidden = true
    list.replaceChildren()
    more.hidden = true
    setStatus(commentsStatus, '')
    setStatus(status, 'Loading…')
    const answer = await getJson(`/api/content/${encodeURIComponent(hash)}`)
    if (mine !== latest) return
    if (!answer.ok) {
      panel.dataset.state = 'error'
      setStatus(status, failure(answer), true)
      return
    }
    setStatus(status, '')
    render(answer.data)
    comments = { hash, page: 0, shown: 0 }
    commentsPart.hidden = false
    follow(answer.data.txid ?? hash, mine)
    await loadComments(mine)
  }

  /** Reloads the comments when the chain says one was written, edited or deleted on the post. */
  function follow (txid, mine) {
    live?.close()
    live = client.follow([`content:${txid}`], event => {
      if (mine !== latest || event.event !== 'notification' || !/^comment/.test(event.data.type)) return
      panel.dataset.live = 'true'
      list.replaceChildren()
      comments = { hash: comments.hash, page: 0, shown: 0 }
      // Past the browser's cache: the answer it holds is from before the comment.
      loadComments(mine, true)
    })
  }

  more.addEventListener('click', () => loadComments(latest))

  return {
    open,
    focus () {
      panel.scrollIntoView({ behavior: 'smooth', block: 'start' })
      heading.focus({ preventScroll: true })
    },
  }
}
