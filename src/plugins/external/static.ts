/**
 * Serves a folder at `/`: the service's demo page (public/), or a mini-app's own page. The Bastyon
 * host reads two files of a mini-app from its own origin, with fetch: b_manifest.json (the app's
 * id, name, author and permissions) and b_icon.png; they are answered to any origin. A manifest
 * whose id is not BASTYON_APP_ID is a sign-in that will never succeed: said at start.
 */
import { readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import fastifyStatic from '@fastify/static'
import fp from 'fastify-plugin'

/** The files the host reads cross-origin (pocketnet.gui, js/lib/apps). */
export const HOST_FILES = new Set(['b_manifest.json', 'b_icon.png'])

/** The manifest's id, if `root` has a readable one. */
function manifestId (root: string): unknown {
  try {
    return (JSON.parse(readFileSync(join(root, 'b_manifest.json'), 'utf8')) as { id?: unknown }).id
  } catch {
    return undefined
  }
}

export default fp<{ root: string }>(async (app, { root }) => {
  const appId = app.miniAppConfig.BASTYON_APP_ID
  const id = manifestId(root)
  if (appId !== '' && id !== undefined && id !== appId) {
    app.log.warn({ manifestId: id, appId }, 'b_manifest.json names another app than BASTYON_APP_ID: the host signs for the manifest\'s id, and sign-in refuses every such signature')
  }
  await app.register(fastifyStatic, {
    root,
    // reply.sendFile is not ours to take: a developer's app may register @fastify/static itself.
    decorateReply: false,
    prefix: '/',
    index: 'index.html',
    // Only files that exist are served; everything else falls through to the JSON 404.
    wildcard: false,
    setHeaders (response, path) {
      if (HOST_FILES.has(basename(path))) response.setHeader('access-control-allow-origin', '*')
    },
  })
}, { name: 'static' })
