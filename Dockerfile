# Patchbay service image: build with the dev toolchain, run with production dependencies only.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY libs ./libs
COPY src ./src
RUN npm run build
# The offline word vectors' compact file (11 MB), built here from the optional package (300 MB) that the
# image itself leaves out.
RUN node -e "import('./dist/src/search/embeddings/word-vectors.js').then((m) => m.loadWordVectors()).then((v) => { if (!v) process.exit(1); })"

FROM node:20-bookworm-slim
# --build-arg LOCAL_EMBEDDINGS=true keeps @huggingface/transformers (~470 MB) for EMBEDDINGS_PROVIDER=local.
ARG LOCAL_EMBEDDINGS=false
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8000 DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN if [ "$LOCAL_EMBEDDINGS" = true ]; then omit=""; else omit="--omit=optional"; fi \
  && ONNXRUNTIME_NODE_INSTALL=skip npm ci --omit=dev $omit --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/node_modules/.cache/patchbay ./node_modules/.cache/patchbay
COPY src/catalog/starter ./src/catalog/starter
VOLUME /data
EXPOSE 8000
USER node
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/v1/health/ready').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
ENTRYPOINT ["node", "dist/src/main.js"]
CMD ["serve"]
