/**
 * Every failure the client reports is a MiniAppError: the service's refusal in its own words (the
 * envelope's `message` and `error`, with the HTTP status), or status 0 when there was no answer to
 * read (the service could not be reached, the host refused to sign or to pay).
 */
export class MiniAppError extends Error {
  override readonly name = 'MiniAppError'

  constructor (
    /** The HTTP status of the service's answer; 0 when there was none. */
    readonly status: number,
    /** What failed, as the service's envelope says it (`message`), or the client's own words. */
    readonly reason: string,
    /** Why (the envelope's `error`), when known. */
    readonly detail?: string,
    /** Seconds to wait before trying again, from `Retry-After` (429, 503). */
    readonly retryAfterS?: number,
    /** The envelope's stable `code`, when it has one (`AUTH_TOKEN_INVALID`, `STORAGE_ERR_PRECONDITION_FAILED`…). */
    readonly code?: string
  ) {
    super(detail === undefined ? reason : `${reason}: ${detail}`)
  }
}

/** Why a promise was rejected, in words: hosts reject with errors, strings or plain objects. */
export function reasonOf (error: unknown): string {
  if (error instanceof Error && error.message !== '') return error.message
  if (typeof error === 'string' && error !== '') return error
  const object = error as { message?: unknown, error?: unknown } | null
  if (typeof object?.message === 'string' && object.message !== '') return object.message
  if (typeof object?.error === 'string' && object.error !== '') return object.error
  return 'no detail'
}
