# rostercal: web server + scheduler. Build: docker build -t rostercal .
# Run: docker run -p 8080:8080 -v rostercal-data:/data -e ROSTERCAL_CONFIG=/config/rostercal.json … rostercal
# Without ROSTERCAL_CONFIG (or UPSTREAM_URL & co.) `serve` refuses to start, naming what is missing.
# This image (the default target, `production`) has no demo: the demo's OpenID provider (oidc-provider, an optional
# dependency) is left out. The demo school (invented people, a sign-in page where anyone picks who they are) is an
# image of its own:
#   docker build --target demo -t rostercal-demo . && docker run -p 8080:8080 rostercal-demo
FROM node:24-slim AS base

ENV NODE_ENV=production \
    PORT=8080 \
    DATA_DIR=/data

WORKDIR /app
COPY package.json package-lock.json .npmrc ./

# The embedded store lives in /data: mount a volume there to keep it across restarts.
# 0700: the store holds children's medical conditions and guardian contacts (files are created 0600).
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
VOLUME ["/data"]

EXPOSE 8080
# /readyz?stale-ok: unhealthy when this replica cannot serve what it has (a damaged or unreadable store, feed
# URLs it cannot trust), not when it is merely stale (upstream down, pulls failing, a store it cannot write):
# replacing it would mend nothing. /readyz (also stale) is for load balancers and alerts; /healthz for liveness.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz?stale-ok').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

ENTRYPOINT ["node", "--max-semi-space-size=8", "--max-old-space-size=1536", "bin/rostercal.js"]

# The demo: optional dependencies included (oidc-provider), `serve --demo` by default.
FROM base AS demo
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY templates ./templates
USER node
CMD ["serve", "--demo"]

# Production, the default target (last): no optional dependencies, so no demo sign-in (`serve --demo` says so).
FROM base AS production
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY templates ./templates
USER node
CMD ["serve"]
