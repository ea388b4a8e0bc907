# syntax=docker/dockerfile:1
#
# Container images for the board and the agent, one target each:
#
#   docker build --target board -t symphonix-board .
#   docker build --target agent -t symphonix-agent .
#
# Both are static binaries (CGO off: the store is pure-Go SQLite) on
# distroless's static image, running as its nonroot user (65532:65532),
# with nothing else in the image: no shell, no package manager.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ENV CGO_ENABLED=0
# -trimpath: no build machine paths in the binaries. The version is read
# from the build info Go embeds; nothing is set with -X. .git is not in the
# context (.dockerignore), so these binaries carry no VCS revision: the
# release binaries (goreleaser, from a checkout) do.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags="-s -w" -o /out/board ./cmd/board && \
    go build -trimpath -ldflags="-s -w" -o /out/agent ./cmd/agent
# The folders the images write to, owned by the nonroot user and closed to
# others: the board refuses a store folder other users may write.
RUN mkdir -p /out/data /out/flow && cp examples/hello/flow.json /out/flow/ && \
    chown -R 65532:65532 /out/data /out/flow && chmod 0700 /out/data

# The board: the web board, the API and the agents' link on port 7777 of
# every interface, its store in /data (mount a volume there).
FROM gcr.io/distroless/static-debian12:nonroot AS board
COPY --from=build /out/board /usr/local/bin/board
COPY --from=build --chown=65532:65532 /out/data /data
ENV SYMPHONIX_DATA=/data
VOLUME /data
EXPOSE 7777
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/board"]
CMD ["--listen", "0.0.0.0:7777"]

# The agent: serves the flow folder at /flow (examples/hello unless another
# is mounted there; it writes its journal and waiting runs in /flow/.symphonix)
# and links to the board at MONITOR_URL with MONITOR_TOKEN.
FROM gcr.io/distroless/static-debian12:nonroot AS agent
COPY --from=build /out/agent /usr/local/bin/agent
COPY --from=build --chown=65532:65532 /out/flow /flow
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/agent"]
CMD ["serve", "/flow"]
