# syntax=docker/dockerfile:1
# On Air in production: the compiled app (npm run build) on Node 24 LTS with production
# dependencies only, as the unprivileged `node` user. Build: docker build -t onair .
# Run: docker run --env-file .env -p 3000:3000 -v onair-data:/app/data onair

# 1. Compile TypeScript to dist/ (dev dependencies: the compiler, the workspace's emulator types).
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/slack-emulator/package.json packages/slack-emulator/
# No install scripts: compiling needs no native addon (the next stage installs those).
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY packages/slack-emulator/src packages/slack-emulator/src
COPY src src
RUN npm run build

# 2. Production dependencies only (sqlite3 fetches its prebuilt native addon here).
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 3. The image: compiled JavaScript, production node_modules, no compiler, no TypeScript loader.
FROM node:24-slim
ENV NODE_ENV=production \
    PORT=3000 \
    STORE_URL=sqlite://data/onair.sqlite
WORKDIR /app
# The attendance chart's labels ask for "DejaVu Sans"; the slim image has no fonts at all.
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/*
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/dist dist
# package.json and scripts/run.mjs: `npm start` and `npm run rekey` work in the image too.
COPY package.json ./
COPY scripts/run.mjs scripts/
# data/ holds the SQLite store (the default STORE_URL); keep it on a volume across upgrades.
RUN mkdir -p data && chown node:node data
USER node
VOLUME ["/app/data"]
EXPOSE 3000
# Liveness on /healthz, with Node's own fetch (the slim image has no curl).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--enable-source-maps", "dist/main.js"]
