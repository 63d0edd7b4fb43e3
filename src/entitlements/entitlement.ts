/**
 * What a user owns, as the entitlements code and its callers see it (docs/entitlements.md): a
 * grant gives an address a SKU, for good or for a number of seconds; a renewal of a SKU still held
 * extends it from its current end. Grants are records of payment: a revocation ends them early and
 * says why, and nothing is ever deleted. Times are milliseconds since the epoch (`now`).
 */
import { isPocketnetAddress, type PocketnetNetwork } from 'pocketnet-client'
import { EntitlementError } from './entitlement-errors.js'

/**
 * A SKU: what is sold or granted, named by the app (`premium`, `article-17`, `pro.monthly`): 1 to
 * 64 lowercase letters, digits, `.`, `_` or `-`, starting with a letter or a digit. Lowercase only,
 * so that `Premium` and `premium` are never two things; safe in a URL path as it is.
 */
export const SKU_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/

export const ENTITLEMENT_LIMITS = {
  /** Ten years: a longer subscription is renewed, or granted for good (no duration). */
  maxDurationS: 315_360_000,
  maxReasonLength: 200,
} as const

/** What an invoice grants once confirmed, or what server code grants: a SKU, to an address, for good or for `durationS`. */
export interface GrantTerms {
  sku: string
  /** The Pocketnet address that gets it. */
  to: string
  /** Seconds from the current end (or from now); absent: for good. */
  durationS?: number
}

/** One grant, as recorded: the history of what an address was given. */
export interface Grant {
  /** Increasing in the order grants were written. */
  id: number
  address: string
  sku: string
  /** The invoice whose confirmation made it; null for a grant by server code. */
  invoiceId: string | null
  /** Why server code granted it; null for an invoice's grant (the invoice says why). */
  reason: string | null
  grantedAtMs: number
  /** When its time began: the end of the grant it renewed, or when it was granted. */
  startsAtMs: number
  /** When it ends; null: never. */
  expiresAtMs: number | null
  revokedAtMs: number | null
  revokeReason: string | null
}

/** A SKU an address holds now: its latest grant, and when the run of grants ends. */
export interface Entitlement {
  sku: string
  /** When the latest grant of this SKU was made. */
  grantedAtMs: number
  /** When it ends, renewals included; null: never. */
  expiresAtMs: number | null
  /** The invoice of the latest grant; null when server code granted it. */
  invoiceId: string | null
}

function invalid (message: string): never {
  throw new EntitlementError('ENTITLEMENT_ERR_INVALID', message)
}

export function checkSku (sku: unknown): asserts sku is string {
  if (typeof sku !== 'string' || !SKU_PATTERN.test(sku)) invalid(`the SKU must be 1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or a digit (got ${JSON.stringify(String(sku).slice(0, 80))})`)
}

export function checkAddress (address: unknown, network: PocketnetNetwork | undefined): asserts address is string {
  if (typeof address !== 'string' || address === '') invalid('the address must be a Pocketnet address')
  if (network !== undefined && !isPocketnetAddress(address, network)) invalid(`${JSON.stringify(String(address).slice(0, 80))} is not an address of the ${network} network`)
}

export function checkDuration (durationS: unknown): void {
  if (durationS === undefined) return
  if (typeof durationS !== 'number' || !Number.isSafeInteger(durationS) || durationS < 1 || durationS > ENTITLEMENT_LIMITS.maxDurationS) {
    invalid(`durationS must be a whole number of seconds from 1 to ${ENTITLEMENT_LIMITS.maxDurationS}, or absent for good`)
  }
}

export function checkReason (reason: unknown, required: boolean): void {
  if (reason === undefined && !required) return
  if (typeof reason !== 'string' || reason.trim() === '' || reason.length > ENTITLEMENT_LIMITS.maxReasonLength) {
    invalid(`the reason must be 1 to ${ENTITLEMENT_LIMITS.maxReasonLength} characters of text`)
  }
}

/** Checks grant terms before anything is written; the address against `network` when given. */
export function checkGrantTerms (terms: GrantTerms, network: PocketnetNetwork | undefined): void {
  if (typeof terms !== 'object' || terms === null) invalid('the grant must be an object { sku, to, durationS? }')
  checkSku(terms.sku)
  checkAddress(terms.to, network)
  checkDuration(terms.durationS)
}
