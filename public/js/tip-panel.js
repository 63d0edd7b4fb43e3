// Tip panel: the user picks an amount in PKOIN and the service makes an invoice for it
// (POST /api/payments/tips: integer satoshi on the wire; its bounds are the service's, and its
// 400 says them). Inside Bastyon, the page's client asks the host to pay the invoice's
// `hostRequest` (sdk.payment) and reports the txid it sent, which the service checks on chain.
// Standalone there is no host to pay with: the invoice and its checkout for Bastyon (`sdk.ext`)
// are shown instead, and in `npm run demo` the demo wallet (`?wallet=demo`) pays the same
// hostRequest on the emulator's chain when asked, reported the same way.
// Either way the state shown is the service's, decided from the chain alone: live from the
// invoice's topic (`payment:<id>`) as the client follows it (an event stream, or long-polling
// where the stream is refused), and read again (GET the invoice) each time following connects.
import { client, hosting } from './client.js'
import { getJson, requestJson } from './api.js'
import { element, setStatus } from './dom.js'
import { formatPkoin, parsePkoin } from './pkoin.js'

const failure = answer => `${answer.message}: ${answer.error ?? 'no detail'}`

const PLAIN_WORDS = {
  404: 'Tips are off on this server.',
}

/** Why the service does not count a reported transaction for the invoice (the `refused` codes). */
const REFUSALS = {
  UNKNOWN_TRANSACTION: 'The node does not know this transaction yet; the invoice updates when it appears on chain.',
  MEMO_MISMATCH: 'This transaction does not carry this invoice\'s memo, so it does not pay it.',
  NOT_PAID_TO_RECEIVER: 'This transaction pays nothing to the invoice\'s address.',
  TXID_TAKEN: 'This transaction already paid another invoice.',
}

/** The invoice's state in words; `reported`: the page sent the service a txid for it. */
function stateText (invoice, reported) {
  switch (invoice.state) {
    case 'pending':
      if (invoice.underpaid) return 'Waiting for a payment in full.'
      return reported ? 'Payment sent: waiting for a block.' : 'Waiting for payment.'
    case 'seen': return `Seen in a block: ${invoice.confirmations} of ${invoice.confirmationsRequired} confirmations.`
    case 'confirmed': return `Confirmed: ${invoice.confirmations} of ${invoice.confirmationsRequired} confirmations. Thank you!`
    case 'expired': return `Expired: no payment in full arrived before ${new Date(invoice.expiresAt).toLocaleString()}.`
    default: return String(invoice.state)
  }
}

/** Money that arrived and does not settle the invoice as asked, each in words. */
function flagsOf (invoice) {
  const flags = []
  if (invoice.underpaid) flags.push(['underpaid', `Underpaid: ${formatPkoin(invoice.underpaidAmount)} PKOIN received of ${formatPkoin(invoice.amount)} PKOIN.`])
  if (invoice.overpaid) flags.push(['overpaid', `Overpaid by ${formatPkoin(invoice.overpaidAmount)} PKOIN.`])
  if (invoice.paidLate) flags.push(['paidLate', `Paid late: ${formatPkoin(invoice.paidLateAmount)} PKOIN arrived after the invoice expired.`])
  return flags
}

/**
 * @param {HTMLElement} panel
 */
export function createTipPanel (panel) {
  const form = panel.querySelector('form')
  const input = panel.querySelector('#tip-amount')
  const submit = form.querySelector('button[type="submit"]')
  const status = panel.querySelector('[data-testid="tip-status"]')
  const needsBastyon = panel.querySelector('[data-testid="tip-needs-bastyon"]')
  const box = panel.querySelector('[data-testid="tip-invoice"]')
  const stateLine = panel.querySelector('[data-testid="tip-state"]')
  const flagList = panel.querySelector('[data-testid="tip-flags"]')
  const payButton = panel.querySelector('[data-testid="tip-pay"]')
  const checkout = panel.querySelector('[data-testid="tip-checkout"]')
  const checkoutObject = panel.querySelector('[data-testid="tip-checkout-object"]')
  const demoLine = panel.querySelector('[data-testid="tip-demo-wallet"]')
  const demoPayButton = panel.querySelector('[data-testid="tip-demo-pay"]')
  const field = name => panel.querySelector(`[data-testid="tip-${name}"]`)
  /**
   * The tip shown; the others' late answers and events are ignored.
   * @type {{ id: string, invoice: any, txid?: string, paying: boolean, events: number, stopped: boolean, following?: { close (): void } } | undefined}
   */
  let current
  /** Who pays from this page, once known: `bastyon`, `demo` or `none`. */
  let payer = 'none'

  hosting.then(found => {
    payer = found.payer
    needsBastyon.hidden = payer === 'bastyon'
    demoLine.hidden = payer !== 'demo'
    panel.dataset.payer = payer
    panel.querySelector('[data-testid="tip-demo-address"]').textContent = found.walletAddress ?? ''
    updatePayButton(current)
  })

  function stop (tip) {
    tip.stopped = true
    tip.following?.close()
  }

  /** Whether `tip` still waits for a payment from this page. */
  const payable = tip => tip?.invoice?.state === 'pending' && tip.txid === undefined

  function updatePayButton (tip) {
    if (tip !== undefined) {
      payButton.hidden = payer !== 'bastyon' || !payable(tip)
      payButton.disabled = tip.paying
    }
    demoPayButton.disabled = payer !== 'demo' || !payable(tip) || tip.paying
  }

  function show (tip, invoice) {
    if (tip !== current) return
    // Confirmed is final: nothing read later takes it back.
    if (tip.invoice?.state === 'confirmed' && invoice.state !== 'confirmed') return
    tip.invoice = invoice
    panel.dataset.state = invoice.state
    setStatus(stateLine, stateText(invoice, tip.txid !== undefined), invoice.state === 'expired')
    const flags = flagsOf(invoice)
    flagList.replaceChildren(...flags.map(([flag, text]) => element('li', { 'data-testid': 'tip-flag', 'data-flag': flag }, text)))
    flagList.hidden = flags.length === 0
    field('due').textContent = `${formatPkoin(invoice.amount)} PKOIN`
    field('receiver').textContent = String(invoice.receiver)
    field('memo').textContent = String(invoice.memo)
    field('expires').textContent = new Date(invoice.expiresAt).toLocaleString()
    field('txid').textContent = invoice.txid ?? tip.txid ?? '–'
    checkout.hidden = invoice.hostCheckout === undefined
    checkoutObject.textContent = invoice.hostCheckout === undefined ? '' : JSON.stringify(invoice.hostCheckout, null, 2)
    updatePayButton(tip)
    box.hidden = false
    if (invoice.state === 'confirmed') stop(tip)
  }

  /** Reads the invoice; dropped if an event told something newer meanwhile. */
  async function refresh (tip) {
    const before = tip.events
    const answer = await getJson(`/api/payments/invoices/${encodeURIComponent(tip.id)}`, { fresh: true })
    if (tip !== current || tip.stopped || tip.events !== before) return
    if (!answer.ok) return setStatus(status, failure(answer), true)
    show(tip, answer.data)
  }

  function follow (tip) {
    const live = () => tip === current && !tip.stopped
    tip.following = client.follow([`payment:${tip.id}`], event => {
      if (!live()) return
      if (event.event === 'resync') return refresh(tip)
      if (event.event !== 'payment' || event.data?.invoice?.id !== tip.id) return
      tip.events++
      show(tip, event.data.invoice)
    }, {
      // Each time events flow (`stream`, or `poll` where the stream is refused): whatever
      // happened before, read once.
      onConnect (transport) {
        if (!live()) return
        panel.dataset.live = transport
        refresh(tip)
      },
    })
  }

  /** Pays through the page's host (Bastyon's, or the demo wallet), then reports the txid to the service. */
  async function pay (tip, asking) {
    tip.paying = true
    updatePayButton(tip)
    setStatus(status, asking)
    let txid
    try {
      txid = await client.sendPayment(tip.invoice)
    } catch (error) {
      tip.paying = false
      if (tip !== current) return
      updatePayButton(tip)
      return setStatus(status, error.message, true)
    }
    tip.txid = txid
    if (tip !== current) return
    show(tip, tip.invoice)
    setStatus(status, 'Sent: the server checks the transaction on chain…')
    const before = tip.events
    let checked
    try {
      checked = await client.reportPayment(tip.invoice, txid)
    } catch (error) {
      checked = { error }
    }
    tip.paying = false
    if (tip !== current) return
    updatePayButton(tip)
    if (checked.error) return setStatus(status, `Sent, but the server could not check it yet (${checked.error.message}). The invoice still follows the chain.`, true)
    const { refused } = checked
    if (refused) setStatus(status, `${REFUSALS[refused] ?? 'The server does not count this transaction.'} (${refused})`, true)
    else setStatus(status, 'Sent and reported: the chain decides the rest.')
    if (tip.events === before) show(tip, checked.invoice)
  }

  async function create (amount) {
    if (current) stop(current)
    current = undefined
    updatePayButton(undefined)
    box.hidden = true
    delete panel.dataset.live
    panel.dataset.state = 'creating'
    setStatus(status, 'Asking the server for an invoice…')
    await hosting
    // Standalone, the host's checkout too: it is what Bastyon would pay with.
    const answer = await requestJson('/api/payments/tips', { method: 'POST', body: payer === 'bastyon' ? { amount } : { amount, checkout: true } })
    if (!answer.ok) {
      panel.dataset.state = 'error'
      return setStatus(status, `${PLAIN_WORDS[answer.status] ? `${PLAIN_WORDS[answer.status]} ` : ''}${failure(answer)}`, true)
    }
    const tip = { id: answer.data.id, invoice: undefined, paying: false, events: 0, stopped: false }
    current = tip
    show(tip, answer.data)
    follow(tip)
    if (payer === 'bastyon') pay(tip, 'Asking Bastyon to pay…')
    else setStatus(status, `Invoice for ${formatPkoin(answer.data.amount)} PKOIN created.`)
  }

  form.addEventListener('submit', async event => {
    event.preventDefault()
    const amount = parsePkoin(input.value)
    if (amount === undefined) return setStatus(status, 'Enter an amount in PKOIN, such as 0.5 (at most 8 decimals).', true)
    submit.disabled = true
    try {
      await create(amount)
    } finally {
      submit.disabled = false
    }
  })
  payButton.addEventListener('click', () => {
    if (payer === 'bastyon' && current && !current.paying) pay(current, 'Asking Bastyon to pay…')
  })
  demoPayButton.addEventListener('click', () => {
    if (payer === 'demo' && payable(current) && !current.paying) pay(current, 'The demo wallet pays on the emulator\'s chain…')
  })
}
