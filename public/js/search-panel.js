// Search panel: content search with a page size and previous/next paging driven by hasMore.
// A result's caption opens the post (onOpen), its author the author's profile (onAuthor).
import { getJson } from './api.js'
import { element, formatDate, setStatus } from './dom.js'

const EXCERPT_LENGTH = 160

/**
 * @param {HTMLElement} panel
 * @param {{ onAuthor: (address: string) => void, onOpen: (hash: string) => void }} options
 */
export function createSearchPanel (panel, { onAuthor, onOpen }) {
  const form = panel.querySelector('form')
  const keyword = panel.querySelector('#search-keyword')
  const size = panel.querySelector('#search-size')
  const status = panel.querySelector('[data-testid="search-status"]')
  const list = panel.querySelector('[data-testid="search-results"]')
  const previous = panel.querySelector('[data-testid="search-prev"]')
  const next = panel.querySelector('[data-testid="search-next"]')
  const pageLabel = panel.querySelector('[data-testid="search-page"]')
  let query = { keyword: '', pageSize: 20, page: 0 }

  function result (item) {
    const excerpt = String(item.m ?? '')
    const author = item.userprofile?.name || item.address || 'unknown'
    const authorButton = element('button', { type: 'button', class: 'link', 'data-testid': 'result-author' }, author)
    authorButton.addEventListener('click', () => onAuthor(item.address))
    const hash = String(item.hash ?? '')
    const openButton = element('button', { type: 'button', class: 'link open', 'data-testid': 'result-open' }, String(item.c || '(no caption)'))
    openButton.disabled = hash === ''
    openButton.addEventListener('click', () => onOpen(hash))
    return element('li', { 'data-testid': 'search-result', 'data-hash': hash },
      element('p', { class: 'caption' }, openButton),
      element('p', { class: 'excerpt' }, excerpt.length > EXCERPT_LENGTH ? `${excerpt.slice(0, EXCERPT_LENGTH)}…` : excerpt),
      element('p', { class: 'meta' }, authorButton, element('span', {}, formatDate(item.time)), element('span', {}, String(item.type ?? ''))))
  }

  async function load () {
    previous.disabled = true
    next.disabled = true
    setStatus(status, 'Searching…')
    panel.dataset.state = 'loading'
    const params = new URLSearchParams({ keyword: query.keyword, page: String(query.page), pageSize: String(query.pageSize) })
    const answer = await getJson(`/api/search?${params}`)
    pageLabel.textContent = `Page ${query.page + 1}`
    if (!answer.ok) {
      list.replaceChildren()
      panel.dataset.state = 'error'
      setStatus(status, `${answer.message}: ${answer.error ?? 'no detail'}`, true)
      previous.disabled = query.page === 0
      return
    }
    const { results, hasMore } = answer.data
    list.replaceChildren(...results.map(result))
    panel.dataset.state = 'done'
    setStatus(status, results.length === 0 ? (query.page === 0 ? 'Nothing found.' : 'No more results.') : `Showing ${query.page * query.pageSize + 1}–${query.page * query.pageSize + results.length}`)
    previous.disabled = query.page === 0
    next.disabled = !hasMore
  }

  form.addEventListener('submit', event => {
    event.preventDefault()
    query = { keyword: keyword.value.trim(), pageSize: Number(size.value), page: 0 }
    if (query.keyword) load()
  })
  previous.addEventListener('click', () => {
    query.page = Math.max(0, query.page - 1)
    load()
  })
  next.addEventListener('click', () => {
    query.page++
    load()
  })
}
