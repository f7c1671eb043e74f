package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/** A local cluster run by {@code bin/tidelog dev}, as a user runs it. */
final class DevCluster implements AutoCloseable {
  static final Path REPO =
      Path.of(System.getProperty("tidelog.repo", "..")).toAbsolutePath().normalize();
  private static final long COMMAND_TIMEOUT_S = 120;

  /** The librdkafka {@code bin/install-prereqs} builds, for SCRAM from kcat and confluent-kafka. */
  static final String LIBRDKAFKA_VERSION = "2.12.0";

  /** Where {@code bin/install-prereqs} built {@link #LIBRDKAFKA_VERSION}'s libraries. */
  static Path librdkafka() {
    Path lib =
        Path.of(
            System.getProperty("user.home"),
            ".cache/tidelog/librdkafka-" + LIBRDKAFKA_VERSION,
            "lib");
    if (!Files.exists(lib.resolve("librdkafka.so.1"))) {
      throw new AssertionError(lib + " has no librdkafka.so.1: run bin/install-prereqs");
    }
    return lib;
  }

  final Path dir;
  final int port;
  private final int brokers;

  DevCluster(Path dir) throws IOException {
    this(dir, 1);
  }

  DevCluster(Path dir, int brokers) throws IOException {
    this.dir = dir;
    this.brokers = brokers;
    this.port = freePorts(brokers);
  }

  /** Starts the cluster, each of {@code settings} ({@code key=value}) in every broker's config. */
  String up(String... settings) throws Exception {
    List<String> args =
        new ArrayList<>(
            List.of("up", "--port", String.valueOf(port), "--brokers", String.valueOf(brokers)));
    for (String setting : settings) {
      args.add("--set");
      args.add(setting);
    }
    Result result = run(args.toArray(String[]::new));
    assertThat(result.exitCode()).as("dev up: %s", result.errors()).isZero();
    return result.output().strip();
  }

  Result down() throws Exception {
    return run("down");
  }

  Result status() throws Exception {
    return run("status");
  }

  long pid() throws IOException {
    return Long.parseLong(Files.readString(dir.resolve("broker-0/pid")).strip());
  }

  Path dataDir() {
    return dir.resolve("broker-0/data");
  }

  /** Kills the broker with SIGKILL and waits until it is gone. */
  void kill() throws Exception {
    ProcessHandle broker = ProcessHandle.of(pid()).orElseThrow();
    broker.destroyForcibly();
    broker.onExit().get(30, TimeUnit.SECONDS);
  }

  /** Whether broker {@code id} runs. */
  boolean running(int id) throws IOException {
    Path pidFile = dir.resolve("broker-" + id + "/pid");
    return Files.exists(pidFile)
        && ProcessHandle.of(Long.parseLong(Files.readString(pidFile).strip()))
            .map(ProcessHandle::isAlive)
            .orElse(false);
  }

  /** Stops broker {@code id} with SIGTERM, a controlled shutdown, and waits until it is gone. */
  void stop(int id) throws Exception {
    Path pidFile = dir.resolve("broker-" + id + "/pid");
    ProcessHandle broker =
        Files.exists(pidFile)
            ? ProcessHandle.of(Long.parseLong(Files.readString(pidFile).strip())).orElse(null)
            : null;
    if (broker != null) { // else it is dead already
      broker.destroy();
      broker.onExit().get(COMMAND_TIMEOUT_S, TimeUnit.SECONDS);
    }
  }

  Result run(String... devArgs) throws Exception {
    List<String> command = new ArrayList<>(List.of(REPO.resolve("bin/tidelog").toString(), "dev"));
    command.add(devArgs[0]);
    command.add("--dir");
    command.add(dir.toString());
    command.addAll(List.of(devArgs).subList(1, devArgs.length));
    return exec(command);
  }

  static Result exec(List<String> command) throws Exception {
    return exec(command, Path.of("/dev/null"), Map.of());
  }

  static Result exec(List<String> command, Path stdin) throws Exception {
    return exec(command, stdin, Map.of());
  }

  /**
   * Runs {@code command} with {@code stdin} as its input and {@code environment} added to this
   * process's, for at most {@link #COMMAND_TIMEOUT_S}, and collects its stdout and stderr (through
   * files, so no pipe can fill up and stall it).
   */
  static Result exec(List<String> command, Path stdin, Map<String, String> environment)
      throws Exception {
    Path stdout = Files.createTempFile("tidelog-e2e", ".stdout");
    Path stderr = Files.createTempFile("tidelog-e2e", ".stderr");
    try {
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .redirectOutput(stdout.toFile())
              .redirectError(stderr.toFile())
              .redirectInput(stdin.toFile());
      builder.environment().putAll(environment);
      Process process = builder.start();
      if (!process.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new AssertionError(command + " did not finish in " + COMMAND_TIMEOUT_S + " s");
      }
      return new Result(process.exitValue(), Files.readString(stdout), Files.readString(stderr));
    } finally {
      Files.deleteIfExists(stdout);
      Files.deleteIfExists(stderr);
    }
  }

  /**
   * A base port such that what {@code bin/tidelog dev up} takes is free: {@code brokers} Kafka
   * ports from it, their health ports from {@code port + 1000}, and etcd's two at {@code port +
   * 2000}.
   */
  private static int freePorts(int brokers) throws IOException {
    // Below Linux's ephemeral range (32768 and up), where outgoing connections take their ports
    for (int attempt = 0; attempt < 50; attempt++) {
      int port = 10_000 + ThreadLocalRandom.current().nextInt(20_000);
      if (allFree(port, brokers)) {
        return port;
      }
    }
    throw new IOException("no free block of ports found");
  }

  private static boolean allFree(int port, int brokers) {
    List<Integer> ports = new ArrayList<>(List.of(port + 2000, port + 2001, port + 2002));
    for (int i = 0; i < brokers; i++) {
      ports.add(port + i);
      ports.add(port + 500 + i); // a secure cluster's inter-broker listener
      ports.add(port + 1000 + i);
    }
    return ports.stream().allMatch(LoopbackPorts::isFree);
  }

  @Override
  public void close() throws Exception {
    down();
  }

  record Result(int exitCode, String output, String errors) {}
}
