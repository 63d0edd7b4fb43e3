/**
 * The link that opens the mini-app at a path inside it, as Bastyon's proxy builds it for a push
 * (`application?id=<appId>&p=<hex of path>`, docs/notifications.md): one function, for every
 * channel that carries a link of its own (Telegram's button). The hex is Bastyon's own
 * `hexEncode`, the one the host writes sessions in (pocketnet-client's hostHex); a path is
 * printable ASCII (notification-rules.ts), for which it is plain hex.
 */
import { hostHex } from 'pocketnet-client'

/** Bastyon's web app, which opens `application?id=…` as the mini-app. */
export const BASTYON_WEB_ORIGIN = 'https://bastyon.com'

/** `https://bastyon.com/application?id=<appId>&p=<hex of path>`. */
export function appLink (appId: string, path: string): string {
  return `${BASTYON_WEB_ORIGIN}/application?id=${encodeURIComponent(appId)}&p=${hostHex(path)}`
}
