# The broker and operator images, one module each, from what `mvn package` built on the host (each
# module's jar, and its runtime dependencies in target/image/lib): no Maven and no sources in the
# image. From the repository root:
#   mvn -B package -DskipTests
#   docker build --build-arg MODULE=broker -t tidelog/broker:0.1.0 .
#   docker build --build-arg MODULE=operator -t tidelog/operator:0.1.0 .
# BASE is any image with a Java 17 runtime as `java` on the PATH and a /bin/sh; the tests build both
# images FROM a Debian base they import (bin/install-prereqs). No RUN step, so any such base works.
ARG BASE=eclipse-temurin:17-jre
FROM ${BASE}
ARG MODULE=broker
COPY ${MODULE}/target/image/lib/ ${MODULE}/target/tidelog-${MODULE}-*.jar /opt/tidelog/lib/
COPY ${MODULE}/docker/${MODULE} /opt/tidelog/bin/${MODULE}
COPY ${MODULE}/docker/${MODULE} /opt/tidelog/bin/entrypoint
ENV HOME=/tmp
USER 1000:1000
ENTRYPOINT ["/opt/tidelog/bin/entrypoint"]
