# syntax=docker/dockerfile:1
# Build: compile with the dev dependencies; runtime: dist/, proto/ and the
# production node_modules only, as a non-root user.

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY proto ./proto
COPY src ./src
RUN npm run build && node scripts/gen-proto.js --check
RUN npm prune --omit=dev --no-audit --no-fund

FROM node:20-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json /app/package-lock.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/proto ./proto
# A default config (Redis at 127.0.0.1); mount your own over it.
COPY deploy/config/zdmatch.yaml /etc/zdmatch/config.yaml
RUN groupadd --system --gid 10001 zdmatch \
 && useradd --system --uid 10001 --gid zdmatch --home-dir /nonexistent --shell /usr/sbin/nologin zdmatch \
 && mkdir -p /etc/zdmatch
USER 10001:10001
# api (gRPC), http (fetch surface), internal (peer mesh), metrics
EXPOSE 8801 8802 8803 9464
# V8 flags of a node process (src/node/runtime-flags.ts says why); override with your own NODE_OPTIONS.
ENV NODE_OPTIONS="--max-semi-space-size=64"
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["serve", "--config", "/etc/zdmatch/config.yaml"]
