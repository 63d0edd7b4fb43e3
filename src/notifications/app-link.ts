/**
 * The link that opens the mini-app at a path inside it, as Bastyon's proxy builds it for a push
 * (`application?id=<appId>&p=<hex of path>`, docs/notifications.md): one function, for every
 * channel that carries a link of its own (Telegram's button).
 */

/** Bastyon's web app, which opens `application?id=…` as the mini-app. */
export const BASTYON_WEB_ORIGIN = 'https://bastyon.com'

/** `https://bastyon.com/application?id=<appId>&p=<hex of path>`. */
export function appLink (appId: string, path: string): string {
  return `${BASTYON_WEB_ORIGIN}/application?id=${encodeURIComponent(appId)}&p=${proxyHex(path)}`
}

/**
 * The proxy's own hex: each UTF-16 unit as two hex digits, a unit above 0xFF lowered by 0x350
 * first, at least two digits each. A path is printable ASCII (notification-rules.ts), for which it is plain hex.
 */
export function proxyHex (text: string): string {
  let hex = ''
  for (let i = 0; i < text.length; i++) {
    let unit = text.charCodeAt(i)
    if (unit > 0xff) unit -= 0x350
    hex += unit.toString(16).padStart(2, '0')
  }
  return hex
}
