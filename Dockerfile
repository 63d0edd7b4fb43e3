# The service as a container: `docker build -t bastyon-miniapp-backend .`, then
# `docker run -p 3000:3000 -e CORS_ORIGINS=https://your.app bastyon-miniapp-backend`.
# deploy/ has a compose file with a TLS proxy in front.

# Build: TypeScript compiled once, with the dev dependencies: packages/pocketnet-client/ (the
# workspace package pocketnet-client) and packages/miniapp-client/ (the browser client) into
# their dist/, then the service into dist/src, bundled with its dependencies into dist/server.js
# (scripts/bundle.ts).
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/pocketnet-client/package.json ./packages/pocketnet-client/
# The other packages' manifests: workspaces of the lockfile, which npm ci checks; the service loads none of them.
COPY packages/miniapp-client/package.json ./packages/miniapp-client/
COPY packages/miniapp-server/package.json ./packages/miniapp-server/
COPY packages/miniapp-testkit/package.json ./packages/miniapp-testkit/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY packages/pocketnet-client ./packages/pocketnet-client
COPY packages/miniapp-client ./packages/miniapp-client
COPY src ./src
COPY scripts/bundle.ts ./scripts/
RUN npm run build

# Runtime: the production dependencies and the compiled service, nothing else.
FROM node:20-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/pocketnet-client/package.json ./packages/pocketnet-client/
COPY packages/miniapp-client/package.json ./packages/miniapp-client/
COPY packages/miniapp-server/package.json ./packages/miniapp-server/
COPY packages/miniapp-testkit/package.json ./packages/miniapp-testkit/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/packages/pocketnet-client/dist ./packages/pocketnet-client/dist
# The browser client the demo page imports from /client/.
COPY --from=build /app/packages/miniapp-client/dist ./packages/miniapp-client/dist
COPY public ./public
# The embedded database (invoices, with PAYMENT_ADDRESS set and no DATABASE_URL) is the one thing
# the service writes: a directory of the unprivileged user's, to mount a volume on.
ENV DATA_DIR=/data
RUN mkdir /data && chown node:node /data
VOLUME /data
# The image's unprivileged user.
USER node
EXPOSE 3000
# node:20-slim has no curl: Node's own fetch asks /healthz.
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# Exec form: node is PID 1 and gets SIGTERM itself (no shell, no npm in between); the flags
# are the start script's (package.json).
CMD ["node", "--retain-maps-for-n-gc=1000", "--wasm-tiering-budget=20000", "dist/server.js"]
