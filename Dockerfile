# smartlb container image.
#
#   docker build -t smartlb .
#   docker run --rm -p 8080:8080 -p 127.0.0.1:9090:9090 --env-file config/smartlb.env smartlb
#
# Build stage: Debian 12 toolchain, Release build of smartlb and smartlb-sim (no tests, no
# benchmarks). Runtime stage: debian:12-slim with only the shared libraries the binaries link
# (OpenSSL 3, spdlog 1.10 + fmt 9, yaml-cpp 0.7), CA certificates for backend TLS, and a non-root user.

FROM debian:12 AS build
ARG DEBIAN_FRONTEND=noninteractive
WORKDIR /src
# The dependency list lives in one place: the same script the README's commands use.
COPY deploy/install-deps.sh deploy/install-deps.sh
RUN bash deploy/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY CMakeLists.txt ./
COPY include include
COPY src src
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DSMARTLB_BUILD_TESTS=OFF -DSMARTLB_BUILD_BENCHMARKS=OFF \
 && cmake --build build -j"$(nproc)" --target smartlb smartlb-sim \
 && strip build/src/smartlb build/src/sim/smartlb-sim \
 && build/src/smartlb --version

FROM debian:12-slim
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libssl3 libspdlog1.10 libfmt9 libyaml-cpp0.7 libhiredis0.14 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 smartlb \
 && useradd --system --uid 10001 --gid smartlb --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin smartlb
COPY --from=build /src/build/src/smartlb /usr/local/bin/smartlb
# The simulated backend (docs/simulator.md), handy for trying the image without Azure keys.
COPY --from=build /src/build/src/sim/smartlb-sim /usr/local/bin/smartlb-sim
COPY LICENSE /usr/share/doc/smartlb/LICENSE
USER 10001:10001
ENV PORT=8080 ADMIN_PORT=9090 LISTEN_ADDRESS=0.0.0.0
EXPOSE 8080 9090
# Liveness from the admin listener's /healthz, with bash's /dev/tcp (the slim image has no
# curl). Disabled in effect when ADMIN_PORT=0: run with --no-healthcheck then.
HEALTHCHECK --interval=15s --timeout=3s --start-period=5s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${ADMIN_PORT:-9090} && printf 'GET /healthz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && IFS= read -r -t 2 status <&3 && [[ $status == 'HTTP/1.1 200'* ]]"]
# SIGTERM drains: no new connections, in-flight requests (streams too) get
# SHUTDOWN_TIMEOUT_SECONDS to finish; give `docker stop -t` more than that.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/smartlb"]
