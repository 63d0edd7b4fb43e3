/**
 * The signed-in user's notifications (`/api/me/notifications`): opting in asks the host to
 * register for them (`sdk.registerForNotifications()`, which leaves a token for this app and user
 * at one of the user's Bastyon proxies), then tells the service, which from then on may push to
 * the user through that proxy; opting out tells the service to stop. The host offers no way to
 * remove its token: without the service's record, nothing is sent with it.
 */
import { MiniAppError, reasonOf } from './errors.js'
import type { Host } from './host.js'
import type { Answer, RequestOptions } from './request.js'
import type { NotificationChannel } from './api-types.js'

/** The channel through the user's Bastyon proxy, as opting in answers it. */
export type BastyonChannel = Extract<NotificationChannel, { channel: 'bastyon' }>

export interface OptInOptions {
  /** The proxy's origin, when the page knows which one the host registered with: tried first. */
  proxy?: string
}

export interface Notifications {
  /**
   * Asks the host to register the user for this app's notifications (the user may be asked), then
   * opts them in on the service. Rejects with a MiniAppError when the host cannot or will not
   * (status 0), or when the service refuses (not signed in: 401; a proxy it does not send to: 400).
   */
  optIn (options?: OptInOptions): Promise<BastyonChannel>
  /** Opts the user out on the service: true when they were in. */
  optOut (): Promise<boolean>
  /** How the user is reached now: empty before opting in. */
  channels (): Promise<NotificationChannel[]>
}

type Send = <T>(path: string, options?: RequestOptions) => Promise<Answer<T>>

const BASTYON = '/api/me/notifications/bastyon'

export function notificationsOf (send: Send, host: Host | undefined, signedIn: () => boolean): Notifications {
  const request = async <T>(path: string, options: RequestOptions): Promise<T> => (await send<T>(path, { ...options, auth: true })).data
  return {
    async optIn (options = {}) {
      // Asked before the host, which may ask the user: a registration the service would refuse is not asked for.
      if (!signedIn()) throw new MiniAppError(401, 'Not signed in', 'sign in first')
      const register = host?.registerForNotifications
      if (register === undefined) throw new MiniAppError(0, 'Not opted in', 'this host cannot register for notifications (its SDK has no registerForNotifications)')
      try {
        await register.call(host)
      } catch (error) {
        throw error instanceof MiniAppError ? error : new MiniAppError(0, 'Not opted in', reasonOf(error))
      }
      return await request<BastyonChannel>(BASTYON, { method: 'PUT', body: options.proxy === undefined ? {} : { proxy: options.proxy } })
    },
    async optOut () {
      return (await request<{ removed: boolean }>(BASTYON, { method: 'DELETE' })).removed
    },
    async channels () {
      return (await request<{ channels: NotificationChannel[] }>('/api/me/notifications', {})).channels
    },
  }
}
