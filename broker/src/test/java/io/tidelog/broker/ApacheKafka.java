package io.tidelog.broker;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A one-node Apache Kafka (KRaft, broker and controller) from Maven Central's jars, started by
 * {@code bench/kafka-cluster} on loopback: the reference that differential tests compare Tidelog's
 * answers with.
 */
final class ApacheKafka implements AutoCloseable {
  private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
  private static final long START_TIMEOUT_S = 600; // the first start resolves Kafka's jars

  final int port;
  private final Path dir;

  private ApacheKafka(Path dir, int port) {
    this.dir = dir;
    this.port = port;
  }

  /** Formats and starts the node under {@code dir}; returns once it lists topics. */
  static ApacheKafka start(Path dir) throws Exception {
    return start(dir, port -> Map.of());
  }

  /**
   * Formats and starts the node under {@code dir} with the configs {@code extra} gives for its
   * PLAINTEXT port added to (or replacing) the defaults; returns once it lists topics.
   */
  static ApacheKafka start(Path dir, Function<Integer, Map<String, String>> extra)
      throws Exception {
    int port = freePortPair();
    Files.createDirectories(dir);
    Path extraFile = dir.resolve("extra.properties");
    StringBuilder lines = new StringBuilder();
    extra.apply(port).forEach((k, v) -> lines.append(k).append('=').append(v).append('\n'));
    Files.writeString(extraFile, lines);
    run(
        START_TIMEOUT_S,
        "up",
        "1",
        dir.toString(),
        String.valueOf(port),
        "512m",
        extraFile.toString());
    return new ApacheKafka(dir, port);
  }

  /** A port such that it and the port 100 above it (the node's controller listener) are free. */
  private static int freePortPair() throws IOException {
    for (int attempt = 0; attempt < 50; attempt++) {
      int port = EtcdServer.freePort();
      if (EtcdServer.isFree(port + 100)) {
        return port;
      }
    }
    throw new IOException("no two free ports 100 apart");
  }

  private static void run(long timeoutS, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(REPO.resolve("bench/kafka-cluster").toString()));
    command.addAll(List.of(args));
    Path output = Files.createTempFile("kafka-cluster", ".log");
    Process process =
        new ProcessBuilder(command)
            .directory(REPO.toFile())
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .start();
    try {
      if (!process.waitFor(timeoutS, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(command + " did not finish in " + timeoutS + " s");
      }
      if (process.exitValue() != 0) {
        throw new IllegalStateException(
            command + " failed (" + process.exitValue() + "): " + Files.readString(output));
      }
    } finally {
      Files.deleteIfExists(output);
    }
  }

  /** What a Kafka tool printed (stdout and stderr) and its exit status. */
  record ToolRun(int exitStatus, String output) {}

  /**
   * Runs a Kafka CLI tool ({@code org.apache.kafka.tools.AclCommand}, {@code
   * kafka.admin.ConfigCommand}, ...) from Kafka's jars, with {@code input} on its stdin.
   */
  static ToolRun tool(String input, String... classAndArgs) throws Exception {
    List<String> command =
        new ArrayList<>(List.of(REPO.resolve("bench/kafka-cluster").toString(), "tools"));
    command.addAll(List.of(classAndArgs));
    Path output = Files.createTempFile("kafka-tool", ".log");
    try {
      Process process =
          new ProcessBuilder(command)
              .directory(REPO.toFile())
              .redirectErrorStream(true)
              .redirectOutput(output.toFile())
              .start();
      try (var stdin = process.getOutputStream()) {
        stdin.write(input.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
      if (!process.waitFor(START_TIMEOUT_S, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(command + " did not finish in " + START_TIMEOUT_S + " s");
      }
      return new ToolRun(process.exitValue(), Files.readString(output));
    } finally {
      Files.deleteIfExists(output);
    }
  }

  @Override
  public void close() throws Exception {
    run(120, "down", dir.toString());
  }
}
