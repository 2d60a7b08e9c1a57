# persistlab alone, for `persistlab probe` on a target: a Cloud Run job (deploy/probe-job.yaml) or
# any machine with a container engine. None of the programs persistlab drives are in it: the probe
# needs none. Build from the repository's root, stamping the commit its probe files record:
#   docker build -f deploy/probe.Dockerfile --build-arg COMMIT=$(git rev-parse --short HEAD) -t persistlab-probe .
# Untested where persistlab is developed (no container engine runs there), like deploy/Dockerfile.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG COMMIT=unstamped
# cgo: SQLite through mattn/go-sqlite3, as the counter app and the probe's CPU work use it.
RUN CGO_ENABLED=1 go build -ldflags "-X persistlab/internal/sysinfo.buildCommit=${COMMIT}" -o /out/persistlab ./cmd/persistlab

FROM debian:bookworm-slim
COPY --from=build /out/persistlab /usr/local/bin/persistlab
ENTRYPOINT ["persistlab"]
# The probe's JSON alone on standard output, one line (a job's log); its report on standard error.
CMD ["probe", "--out", "-"]
