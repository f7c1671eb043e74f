package io.tidelog.e2e;

import com.github.dockerjava.api.DockerClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.testcontainers.DockerClientFactory;

/**
 * The tests' own Docker daemon, which {@code bin/install-prereqs} starts (its socket under {@code
 * ~/.cache/tidelog/docker}; the container tests' JVM gets it as {@code DOCKER_HOST}), reached with
 * Testcontainers' docker-java client; and the images the container tests run, built here from the
 * repository's Dockerfile FROM the Debian base image that {@code bin/install-prereqs} imported, so
 * that nothing comes from a registry.
 */
public final class DockerEngine {
  /** The base image {@code bin/install-prereqs} makes with debootstrap: Debian 12 and Java 17. */
  public static final String BASE_IMAGE = "tidelog-test/debian-jre17:bookworm";

  private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(5);

  private DockerEngine() {}

  /**
   * A client of the daemon, or why the container tests cannot run here: no daemon answers, or it
   * has not the base image.
   */
  public static Connection connect() {
    DockerClient client;
    try {
      client = DockerClientFactory.instance().client();
      client.pingCmd().exec();
    } catch (RuntimeException e) {
      return new Connection(
          null,
          "no Docker daemon answers at DOCKER_HOST="
              + System.getenv("DOCKER_HOST")
              + " ("
              + e.getMessage()
              + "); bin/install-prereqs starts one where it can");
    }
    try {
      client.inspectImageCmd(BASE_IMAGE).exec();
    } catch (RuntimeException e) {
      return new Connection(
          null, "the daemon has no " + BASE_IMAGE + "; bin/install-prereqs imports it");
    }
    return new Connection(client, null);
  }

  /** A client, or the reason there is none. */
  public record Connection(DockerClient client, String unavailable) {}

  /**
   * Builds {@code tidelog/<module>:e2e} from the repository's Dockerfile, FROM the base image, with
   * the module's jars as {@code mvn package} left them.
   */
  public static String buildImage(DockerClient client, String module) {
    Path lib = DevCluster.REPO.resolve(module).resolve("target/image/lib");
    if (!Files.isDirectory(lib)) {
      throw new IllegalStateException(lib + " is missing: run mvn package first");
    }
    String tag = "tidelog/" + module + ":e2e";
    return build(client, DevCluster.REPO.resolve("Dockerfile"), module, tag);
  }

  /**
   * Builds {@code tidelog-test/etcd:e2e}: the base image with this machine's etcd (Debian's
   * etcd-server) as {@code etcd} on the PATH, as the etcd image the operator names has it.
   */
  public static String buildEtcdImage(DockerClient client, Path dir) throws IOException {
    Path context = Files.createDirectories(dir.resolve("etcd-image"));
    Files.copy(Path.of("/usr/bin/etcd"), context.resolve("etcd"));
    Files.writeString(
        context.resolve("Dockerfile"),
        """
        ARG BASE
        FROM ${BASE}
        COPY etcd /usr/local/bin/etcd
        USER 1000:1000
        """);
    return build(client, context.resolve("Dockerfile"), null, "tidelog-test/etcd:e2e");
  }

  private static String build(DockerClient client, Path dockerfile, String module, String tag) {
    var build =
        client
            .buildImageCmd()
            .withBaseDirectory(dockerfile.getParent().toFile())
            .withDockerfile(dockerfile.toFile())
            .withBuildArg("BASE", BASE_IMAGE)
            .withTags(Set.of(tag));
    if (module != null) {
      build.withBuildArg("MODULE", module);
    }
    build.start().awaitImageId(BUILD_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    return tag;
  }

  /** The size of {@code image}, in bytes. */
  public static long size(DockerClient client, String image) {
    return client.inspectImageCmd(image).exec().getSize();
  }
}
