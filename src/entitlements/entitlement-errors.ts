/** What the entitlements refuse. Match on `err.code`. */
import { CodedError } from 'pocketnet-client'

export const ENTITLEMENT_ERROR_CODES = {
  ENTITLEMENT_ERR_INVALID: 'The grant, revocation or check asked for is not valid: an address, SKU, duration or reason out of its rules.',
} as const

export type EntitlementErrorCode = keyof typeof ENTITLEMENT_ERROR_CODES

export class EntitlementError extends CodedError<EntitlementErrorCode> {
  override name = 'EntitlementError'
}
