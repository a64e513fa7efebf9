# One image for every process of the service: the web process (the default command), the index
# worker (`node dist/app/worker.js`) and the CLI (`node dist/app/cli.js deploy|sync|…`).
# infra/docker-compose.yml builds it and runs all three.
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080
WORKDIR /app
# What dist/ reads at run time, relative to package.json: the migrations and the generated
# configset (`schema --check`); the content types are compiled into dist/content-types.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/infra/migrations infra/migrations
COPY --from=build /app/infra/solr infra/solr
USER node
EXPOSE 8080
CMD ["node", "dist/app/server.js"]
