# One image for every process type; docker-compose.yml picks the command.
# Node 20: the version CI tests; package.json engines and .nvmrc say the same (test/unit/node-versions.test.js).
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY config ./config
COPY shared ./shared
COPY producers ./producers
COPY workers ./workers
COPY emulator ./emulator
COPY examples ./examples
COPY templates ./templates
COPY scripts ./scripts
USER node
CMD ["node", "workers/worker.js"]
