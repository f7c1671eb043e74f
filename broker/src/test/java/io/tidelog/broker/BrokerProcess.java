package io.tidelog.broker;

import java.io.IOException;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * A broker in its own JVM, run by {@link Broker#main} from a {@code server.properties} under the
 * test's directory, so that a test can SIGKILL, SIGTERM, SIGSTOP and SIGCONT it like a real one.
 */
final class BrokerProcess implements AutoCloseable {
  private static final long START_TIMEOUT_MS = 60_000;
  final int id;
  final int port;
  final int httpPort;
  private final Path dir;
  private final Map<String, String> config;
  private Process process;

  BrokerProcess(int id, Path dir, String etcd, Map<String, String> overrides) throws IOException {
    this.id = id;
    this.dir = dir;
    this.port = EtcdServer.freePort();
    config = new TreeMap<>();
    config.put("node.id", String.valueOf(id));
    config.put("listeners", "PLAINTEXT://127.0.0.1:" + port);
    config.put("log.dirs", dir.resolve("data").toString());
    this.httpPort = EtcdServer.freePort();
    config.put("tidelog.http.port", String.valueOf(httpPort));
    config.put("tidelog.etcd.endpoints", etcd);
    config.put("num.io.threads", "2");
    config.putAll(overrides);
  }

  String address() {
    return "127.0.0.1:" + port;
  }

  /** Creates topics of one partition and one replica through this broker, as a client would. */
  void createTopics(String... names) throws Exception {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, address()))) {
      admin
          .createTopics(Stream.of(names).map(name -> new NewTopic(name, 1, (short) 1)).toList())
          .all()
          .get();
    }
  }

  /** What the broker has logged so far, across its restarts. */
  String log() throws IOException {
    return Files.readString(dir.resolve("broker.log"));
  }

  /** Starts the JVM and waits until the broker accepts connections. */
  BrokerProcess start() throws Exception {
    launch();
    return awaitListening();
  }

  /** Starts the JVM, not waiting for anything. */
  void launch() throws Exception {
    Files.createDirectories(dir);
    Properties properties = new Properties();
    properties.putAll(config);
    Path file = dir.resolve("server.properties");
    try (Writer writer = Files.newBufferedWriter(file)) {
      properties.store(writer, null);
    }
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    process =
        new ProcessBuilder(
                List.of(
                    java.toString(),
                    "-Xmx256m",
                    "-XX:+ExitOnOutOfMemoryError",
                    "-cp",
                    System.getProperty("java.class.path"),
                    Broker.class.getName(),
                    "--config",
                    file.toString()))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("broker.log").toFile()))
            .start();
  }

  /** Waits until the broker accepts Kafka connections; fails when its JVM exits first. */
  BrokerProcess awaitListening() throws Exception {
    long deadline = System.currentTimeMillis() + START_TIMEOUT_MS;
    while (System.currentTimeMillis() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "Broker "
                + id
                + " exited with "
                + process.exitValue()
                + "; see "
                + dir.resolve("broker.log"));
      }
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
        return this;
      } catch (IOException e) {
        Thread.sleep(100);
      }
    }
    throw new IllegalStateException("Broker " + id + " did not start in time");
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** Waits until the JVM exits on its own; its exit status. */
  int awaitExit(long timeoutSeconds) throws InterruptedException {
    if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      throw new IllegalStateException(
          "Broker " + id + " still runs after " + timeoutSeconds + " s");
    }
    return process.exitValue();
  }

  void kill() throws Exception {
    signal("KILL");
    process.waitFor(10, TimeUnit.SECONDS);
  }

  /** SIGTERM: a controlled shutdown. */
  void stop() throws Exception {
    process.destroy();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  void pause() throws Exception {
    signal("STOP");
  }

  void resume() throws Exception {
    signal("CONT");
  }

  private void signal(String name) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid())).start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
    }
  }

  @Override
  public void close() throws Exception {
    if (process != null && process.isAlive()) {
      resume();
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }
}
