# The broker and operator images, one module each. Build from the repository root:
#   docker build --build-arg MODULE=broker -t tidelog/broker:0.1.0 .
#   docker build --build-arg MODULE=operator -t tidelog/operator:0.1.0 .
ARG MODULE=broker

FROM maven:3.9-eclipse-temurin-17 AS build
ARG MODULE
WORKDIR /src
COPY . .
RUN mvn -B -q -DskipTests -pl "$MODULE" -am package \
  && mvn -B -q -pl "$MODULE" dependency:copy-dependencies -DincludeScope=runtime \
       -DoutputDirectory=target/lib \
  && cp "$MODULE"/target/tidelog-"$MODULE"-*.jar "$MODULE"/target/lib/

FROM eclipse-temurin:17-jre
ARG MODULE
RUN useradd --uid 1000 --no-create-home --home-dir /opt/tidelog tidelog
COPY --from=build /src/$MODULE/target/lib/ /opt/tidelog/lib/
COPY $MODULE/docker/$MODULE /opt/tidelog/bin/$MODULE
RUN ln -s /opt/tidelog/bin/$MODULE /opt/tidelog/bin/entrypoint
USER 1000
ENTRYPOINT ["/opt/tidelog/bin/entrypoint"]
