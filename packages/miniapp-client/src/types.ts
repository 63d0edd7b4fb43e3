/** The invoice as the service answers it (`GET /api/payments/invoices/{id}`); amounts in satoshi. */
export interface Invoice {
  id: string
  amount: number
  receiver: string
  memo: string
  state: 'pending' | 'seen' | 'confirmed' | 'expired'
  txid: string | null
  confirmations: number
  confirmationsRequired: number
  expiresAt: string
  underpaid: boolean
  underpaidAmount: number
  overpaid: boolean
  overpaidAmount: number
  paidLate: boolean
  paidLateAmount: number
  metadata: Record<string, unknown>
  /** What the host's `payment` takes, unchanged. */
  hostRequest: { recievers: Array<{ address: string, amount: number }>, feemode: string, message: string }
  /** With a checkout: what the host's `ext` takes. */
  hostCheckout?: Record<string, unknown>
}
