// A premium article: a teaser for everyone, the text for a reader the chain's confirmation granted it to.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import Fastify from 'fastify'
import { miniApp, signedInUser } from 'bastyon-miniapp-server'

const ARTICLES = new Map([
  ['why-pkoin', { title: 'Why PKOIN', teaser: 'A tip is a vote you can count.', text: 'The full argument, for readers who paid.', priceSat: 50_000_000 }],
])
const notFound = { message: 'No such article', error: 'NOT_FOUND' }
export async function build ({ logger = false, ...settings } = {}) {
  const app = Fastify({ logger })
  await app.register(miniApp, { staticRoot: fileURLToPath(new URL('public', import.meta.url)), ...settings })
  // The browser client as an ES module, at /client/index.js.
  await app.register(fastifyStatic, { root: join(dirname(fileURLToPath(import.meta.resolve('bastyon-miniapp-client/package.json'))), 'dist'), prefix: '/client/', decorateReply: false })
  app.get('/api/articles/:id', async ({ params }, reply) => {
    const article = ARTICLES.get(params.id)
    if (!article) return reply.code(404).send(notFound)
    return { message: 'Article', data: { title: article.title, teaser: article.teaser, priceSat: article.priceSat } }
  })
  // Confirmed, the invoice grants the article to the reader, in the same commit: no list of who paid to keep.
  app.post('/api/articles/:id/invoice', { config: { auth: true } }, async (request, reply) => {
    const article = ARTICLES.get(request.params.id)
    if (!article) return reply.code(404).send(notFound)
    const invoice = await app.payments.createInvoice({ amount: article.priceSat, grant: { sku: `article.${request.params.id}`, to: signedInUser(request).address } })
    return { message: 'Invoice created', data: invoice }
  })
  app.get('/api/articles/:id/text', { config: { auth: true } }, async (request, reply) => {
    const article = ARTICLES.get(request.params.id)
    if (!article) return reply.code(404).send(notFound)
    if (!(await app.entitlements.has(signedInUser(request).address, `article.${request.params.id}`))) {
      return reply.code(402).send({ message: 'Pay for this article first', error: 'PAYMENT_REQUIRED' })
    }
    return { message: 'Article', data: { text: article.text } }
  })
  return app
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await (await build({ logger: true })).listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
