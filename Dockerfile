# admission-operator: build with dev dependencies, run with production ones only.

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY operator ./operator
COPY webhook ./webhook
RUN npm run build

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
# Non-root, numeric so runAsNonRoot can verify it; the filesystem can be read-only (nothing is written).
USER 65532:65532
EXPOSE 9443
ENTRYPOINT ["node", "--enable-source-maps", "dist/operator/main.js"]
