// Inside Bastyon the host signs and pays; in a plain browser, ?signer=<name> uses the dev host (npm run dev).
import { connectHost, createClient, demoHost } from '/client/index.js'

const query = new URLSearchParams(location.search)
const ID = query.get('article') ?? 'why-pkoin'
const $ = (id) => document.getElementById(id)
const signer = query.get('signer')
const host = signer ? demoHost({ signer }) : await connectHost()
const client = createClient({ host, sessionStore: sessionStorage })

async function showText () {
  const { text } = await client.request(`/api/articles/${ID}/text`, { auth: true })
  $('text').textContent = text
  $('buy').hidden = true
}

async function buy () {
  if (!client.session) await client.signIn()
  const invoice = await client.request(`/api/articles/${ID}/invoice`, { method: 'POST', auth: true })
  await client.pay(invoice, { onUpdate: (next) => { $('state').textContent = `${next.state}, ${next.confirmations} confirmations` } })
  $('state').textContent = 'Paid'
  await showText()
}

const article = await client.request(`/api/articles/${ID}`)
$('title').textContent = article.title
$('teaser').textContent = article.teaser
$('buy').textContent = `Read it all for ${article.priceSat / 1e8} PKOIN`
$('buy').hidden = false
$('buy').onclick = () => buy().catch((error) => { $('state').textContent = error.message })
// Signed in already: the server knows what this reader holds (402 until they bought it).
if (client.session) showText().catch(() => {})
