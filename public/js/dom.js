// Small DOM helpers. Text from the chain is user content: it only ever goes in as textContent.

/**
 * Creates an element with attributes and text or child nodes; never parses HTML.
 * @param {string} tag
 * @param {Record<string, string>} [attributes]
 * @param {...(Node|string)} children
 */
export function element (tag, attributes = {}, ...children) {
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value)
  for (const child of children) node.append(child)
  return node
}

/** Shows a status line; `error` styles it as one. */
export function setStatus (node, text, error = false) {
  node.textContent = text
  node.classList.toggle('error', error)
}

/** Runs `action` on each click with `button` disabled meanwhile, so that one click makes one request. */
export function onClick (button, action) {
  button.addEventListener('click', async () => {
    button.disabled = true
    try {
      await action()
    } finally {
      button.disabled = false
    }
  })
}

/** "3 min ago", "2 h ago" for a unix time in seconds. */
export function timeAgo (unixSeconds, now = Date.now()) {
  const seconds = Math.max(0, Math.round(now / 1000 - Number(unixSeconds)))
  if (seconds < 60) return `${seconds} s ago`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`
  return `${Math.floor(seconds / 86400)} days ago`
}

/** A date for a unix time in seconds (numbers or numeric strings, as nodes send both). */
export function formatDate (unixSeconds) {
  const value = Number(unixSeconds)
  return Number.isFinite(value) && value > 0 ? new Date(value * 1000).toLocaleDateString() : 'unknown'
}
